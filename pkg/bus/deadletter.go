package bus

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/prometheus/client_golang/prometheus"
)

// MaxReasonLength bounds the Dlq-Reason header, in bytes.
const MaxReasonLength = 1024

// DeadLetter is a message that a consumer gave up on, with what is needed to store it in the
// dead-letter stream and to re-drive it later.
type DeadLetter struct {
	// Consumer is the durable consumer that gave up.
	Consumer string
	// Subject, Header and Data are the original message. Header may be nil.
	Subject string
	Header  nats.Header
	Data    []byte
	// MsgID is the original Nats-Msg-Id; empty means Header's, else "<Stream>:<Sequence>".
	MsgID string
	// Stream and Sequence locate the original message, when known.
	Stream   string
	Sequence uint64
	// Reason is why the consumer gave up.
	Reason error
}

// DeadLetterer stores dead letters in the DEADLETTER stream, on deadletter.<consumer>, with
// the original payload and headers (except the Nats-* server directives) and the Dlq-*
// headers, and counts them in
// bus_dead_letters_total. The Nats-Msg-Id of a dead letter is "<consumer>:<original msg id>",
// so the same failure dead-lettered again on a redelivery is stored once (within the stream's
// duplicate window).
type DeadLetterer struct {
	js      jetstream.JetStream
	counter *prometheus.CounterVec
	now     func() time.Time
}

// NewDeadLetterer returns a DeadLetterer publishing with js and registering its counter on
// reg (nil: not registered).
func NewDeadLetterer(js jetstream.JetStream, reg prometheus.Registerer) (*DeadLetterer, error) {
	c, err := newDeadLetterCounter(reg)
	if err != nil {
		return nil, err
	}
	return &DeadLetterer{js: js, counter: c, now: time.Now}, nil
}

// Send stores dl in the dead-letter stream and returns once JetStream has acknowledged it.
func (d *DeadLetterer) Send(ctx context.Context, dl DeadLetter) error {
	origID := dl.originalMsgID()
	h := make(nats.Header, len(dl.Header)+8)
	for k, vs := range dl.Header {
		// Server directives (Nats-Msg-Id, Nats-Expected-*, Nats-Rollup, Nats-TTL...) would
		// misdirect the copy, or purge the dead-letter subject.
		if !strings.HasPrefix(k, "Nats-") {
			h[k] = append([]string(nil), vs...)
		}
	}
	kind := ReasonKind(dl.Reason)
	h.Set(HeaderDLQReason, reasonText(dl.Reason))
	h.Set(HeaderDLQReasonKind, kind)
	h.Set(HeaderDLQOriginalSubject, dl.Subject)
	h.Set(HeaderDLQConsumer, dl.Consumer)
	h.Set(HeaderDLQFailedAt, d.now().UTC().Format(time.RFC3339Nano))
	h.Set(HeaderDLQOriginalMsgID, origID)
	if dl.Stream != "" {
		h.Set(HeaderDLQOriginalStream, dl.Stream)
		h.Set(HeaderDLQOriginalSequence, strconv.FormatUint(dl.Sequence, 10))
	}
	h.Set(nats.MsgIdHdr, dl.Consumer+":"+origID)
	m := &nats.Msg{Subject: DeadLetterSubject(dl.Consumer), Header: h, Data: dl.Data}
	ack, err := d.js.PublishMsg(ctx, m, jetstream.WithExpectStream(DeadLetterStream))
	if err != nil {
		return fmt.Errorf("dead-lettering %s from %s: %w", origID, dl.Consumer, err)
	}
	if !ack.Duplicate {
		d.counter.WithLabelValues(dl.Consumer, kind).Inc()
	}
	return nil
}

// SendJetStream dead-letters a message fetched from a JetStream consumer. It has the shape of
// projection.DeadLetterFunc. The caller still acknowledges msg.
func (d *DeadLetterer) SendJetStream(ctx context.Context, consumer string, msg jetstream.Msg, reason error) error {
	dl := DeadLetter{Consumer: consumer, Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data(), Reason: reason}
	if md, err := msg.Metadata(); err == nil {
		dl.Stream, dl.Sequence = md.Stream, md.Sequence.Stream
	}
	return d.Send(ctx, dl)
}

func (dl DeadLetter) originalMsgID() string {
	switch {
	case dl.MsgID != "":
		return dl.MsgID
	case dl.Header.Get(nats.MsgIdHdr) != "":
		return dl.Header.Get(nats.MsgIdHdr)
	case dl.Stream != "":
		return dl.Stream + ":" + strconv.FormatUint(dl.Sequence, 10)
	default:
		return nuid.Next() // not from a stream: nothing stable to de-duplicate on
	}
}

// reasonText makes an error fit a NATS header value: one line, at most MaxReasonLength bytes.
func reasonText(err error) string {
	s := "unknown"
	if err != nil {
		s = err.Error()
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxReasonLength {
		return s
	}
	s = s[:MaxReasonLength]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
