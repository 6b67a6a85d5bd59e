package bus

import (
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// delivery is what JetStream tells of a message it delivered to a consumer.
type delivery struct {
	// streamSeq is the message's sequence in its stream.
	streamSeq uint64
	// delivered counts the deliveries of the message to the consumer, this one included.
	delivered uint64
	// pending is how many messages of the consumer's filter remained after this one.
	pending uint64
	// published is when the stream stored the message.
	published time.Time
}

// deliveryOf reads m's delivery from its reply subject,
// $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>, or the
// form with <domain>.<account hash> after $JS.ACK. and a last token added. It allocates nothing
// (Metadata allocates and parses every token, which showed in the consumers' profiles); a reply
// it does not know is left to Metadata. ok is false for a message that is not a JetStream
// delivery.
func deliveryOf(m jetstream.Msg) (d delivery, ok bool) {
	if rest, found := strings.CutPrefix(m.Reply(), "$JS.ACK."); found {
		var tok [12]string
		n := 0
		for n < len(tok) {
			t, after, more := strings.Cut(rest, ".")
			tok[n] = t
			n++
			if !more {
				break
			}
			rest = after
		}
		at := -1 // the token of <delivered>
		switch {
		case n == 7:
			at = 2
		case n >= 9:
			at = 4
		}
		if at >= 0 {
			d, ok = parseDelivery(tok[at], tok[at+1], tok[at+3], tok[at+4])
			if ok {
				return d, true
			}
		}
	}
	md, err := m.Metadata()
	if err != nil {
		return delivery{}, false
	}
	return delivery{streamSeq: md.Sequence.Stream, delivered: md.NumDelivered, pending: md.NumPending,
		published: md.Timestamp}, true
}

func parseDelivery(delivered, seq, nanos, pending string) (delivery, bool) {
	var d delivery
	var err1, err2, err3, err4 error
	d.delivered, err1 = strconv.ParseUint(delivered, 10, 64)
	d.streamSeq, err2 = strconv.ParseUint(seq, 10, 64)
	ns, err3 := strconv.ParseInt(nanos, 10, 64)
	d.pending, err4 = strconv.ParseUint(pending, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return delivery{}, false
	}
	d.published = time.Unix(0, ns)
	return d, true
}
