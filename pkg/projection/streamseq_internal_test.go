package projection

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// replyMsg is a JetStream message that has only a reply subject.
type replyMsg struct {
	jetstream.Msg
	reply string
}

func (m replyMsg) Reply() string { return m.reply }

func (m replyMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return nil, errors.New("not a JetStream reply")
}

// The stream sequence comes out of both forms of the reply subject; anything else is refused
// (by Metadata, which gets the replies streamSeq does not know).
func TestStreamSeqReadsBothReplyForms(t *testing.T) {
	for _, c := range []struct {
		reply string
		seq   uint64
		ok    bool
	}{
		{"$JS.ACK.PAYMENTS.cons_1.1.123456.42.1700000000000000000.876543", 123456, true},
		{"$JS.ACK._.ABCDEF.PAYMENTS.cons_1.1.123457.42.1700000000000000000.876543.xyz", 123457, true},
		{"$JS.ACK.hub.ABCDEF.PAYMENTS.cons_1.1.7.8.1700000000000000000.0", 7, true},
		{"$JS.ACK.PAYMENTS.cons_1.1.12x.42.1700000000000000000.876543", 0, false},
		{"$JS.ACK.PAYMENTS.cons_1.1.18446744073709551616.42.1700000000000000000.876543", 0, false},
		{"$JS.ACK.PAYMENTS.cons_1.1.123456.42.17", 0, false},
		{"$JS.ACK.a.b.PAYMENTS.cons_1.1.123456.42.17", 0, false},
		{"_INBOX.abc.def", 0, false},
		{"", 0, false},
	} {
		seq, err := streamSeq(replyMsg{reply: c.reply})
		if (err == nil) != c.ok || seq != c.seq {
			t.Errorf("streamSeq(%q) = %d, %v; want %d, ok %v", c.reply, seq, err, c.seq, c.ok)
		}
	}
}
