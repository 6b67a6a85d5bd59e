package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/events"
)

func TestIsPermanent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want bool
		kind string
	}{
		{errors.New("timeout"), false, ReasonPermanent},
		{Permanent(errors.New("no such merchant")), true, ReasonPermanent},
		{fmt.Errorf("applying: %w", Permanent(errors.New("x"))), true, ReasonPermanent},
		{fmt.Errorf("decoding: %w", events.ErrUndecodable), true, ReasonUndecodable},
		{&events.ValidationError{Type: "payment.created", Field: "amount", Reason: "bad"}, true, ReasonInvalid},
		{Permanent(fmt.Errorf("%w: boom", ErrHandlerPanicked)), true, ReasonPanic},
		{Permanent(fmt.Errorf("%w: x", ErrDeliveriesExhausted)), true, ReasonExhausted},
	}
	for _, c := range cases {
		if got := IsPermanent(c.err); got != c.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := ReasonKind(c.err); got != c.kind {
			t.Errorf("ReasonKind(%v) = %q, want %q", c.err, got, c.kind)
		}
	}
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
	if !errors.Is(Permanent(errors.New("x")), ErrPermanent) {
		t.Error("a Permanent error does not match ErrPermanent")
	}
}

func TestMarshalerUnmarshal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		header   nats.Header
		wantUUID string
	}{
		{"watermill uuid", nats.Header{HeaderWatermillUUID: {"wm-1"}, nats.MsgIdHdr: {"id-1"}}, "wm-1"},
		{"hand published with a msg id", nats.Header{nats.MsgIdHdr: {"id-1"}}, "id-1"},
		{"no id at all", nil, ""},
	}
	for _, c := range cases {
		msg, err := Marshaler{}.Unmarshal(&nats.Msg{Subject: testSubject, Data: []byte("x"), Header: c.header})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.wantUUID != "" && msg.UUID != c.wantUUID || msg.UUID == "" {
			t.Errorf("%s: UUID %q, want %q", c.name, msg.UUID, c.wantUUID)
		}
		if got := msg.Metadata.Get(MetadataSubject); got != testSubject {
			t.Errorf("%s: subject metadata %q", c.name, got)
		}
	}

	// Several values of a header must not make the message unprocessable.
	h := nats.Header{"X-Tag": {"a", "b"}, HeaderCorrelationID: {"req-1"}}
	msg, err := Marshaler{}.Unmarshal(&nats.Msg{Subject: testSubject, Header: h})
	if err != nil {
		t.Fatalf("multi-valued header: %v", err)
	}
	if got := msg.Metadata.Get("X-Tag"); got != "a, b" {
		t.Errorf("X-Tag = %q, want %q", got, "a, b")
	}
	if got := msg.Metadata.Get(MetadataCorrelationID); got != "req-1" {
		t.Errorf("correlation id %q, want req-1", got)
	}
}

func TestReasonTextFitsAHeader(t *testing.T) {
	t.Parallel()
	r := reasonText(errors.New("line one\r\nline two\n" + strings.Repeat("é", MaxReasonLength)))
	if strings.ContainsAny(r, "\r\n") || len(r) > MaxReasonLength || !strings.HasPrefix(r, "line one line two é") {
		t.Errorf("reason %q (%d bytes)", r[:40], len(r))
	}
}

func TestTimingRule(t *testing.T) {
	t.Parallel()
	def := RouterConfig{}.withDefaults()
	if got := def.retryBudget(); got >= DefaultAckTimeout {
		t.Errorf("default retry budget %v is not below the default ack timeout", got)
	}
	cases := []struct {
		name string
		cfg  RouterConfig
		spec ConsumerSpec
		ok   bool
	}{
		{"defaults", RouterConfig{}, ConsumerSpec{}, true},
		{"ack timeout above ack wait", RouterConfig{AckTimeout: 50 * time.Second}, ConsumerSpec{AckWait: 40 * time.Second}, false},
		{"slow handler", RouterConfig{HandlerTimeout: 10 * time.Second}, ConsumerSpec{}, false},
		{"no retries, slow handler", RouterConfig{HandlerTimeout: 10 * time.Second, Retry: RetryConfig{MaxRetries: -1}}, ConsumerSpec{}, true},
		{"short backoff step", RouterConfig{}, ConsumerSpec{BackOff: []time.Duration{time.Minute, 20 * time.Second}}, false},
		{"backoff above ack timeout", RouterConfig{}, ConsumerSpec{BackOff: []time.Duration{time.Minute, 5 * time.Minute}}, true},
	}
	for _, c := range cases {
		c.spec.Stream, c.spec.Durable = "PAYMENTS", "d"
		err := c.cfg.withDefaults().checkTiming(c.spec.withDefaults())
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrTimingBudget) {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestAddConsumerRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	r, err := NewRouter(RouterConfig{URL: b.url, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	noop := func(*message.Message) error { return nil }
	if err := r.AddConsumer(ConsumerSpec{Stream: "PAYMENTS", Durable: "a"}, noop); err != nil {
		t.Fatalf("add consumer: %v", err)
	}
	cases := []struct {
		spec ConsumerSpec
		want error
	}{
		{ConsumerSpec{Stream: "PAYMENTS", Durable: "a"}, ErrDuplicateConsumer},
		{ConsumerSpec{Stream: "PAYMENTS"}, ErrInvalidSpec},
		{ConsumerSpec{Stream: "PAYMENTS", Durable: "a.b"}, ErrInvalidSpec},
		{ConsumerSpec{Stream: "PAYMENTS", Durable: "b", AckWait: 10 * time.Second}, ErrTimingBudget},
	}
	for _, c := range cases {
		if err := r.AddConsumer(c.spec, noop); !errors.Is(err, c.want) {
			t.Errorf("%+v: err %v, want %v", c.spec, err, c.want)
		}
	}
}

func TestTheSameDeadLetterIsStoredOnce(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	reg := prometheus.NewRegistry()
	d, err := NewDeadLetterer(b.js, reg)
	if err != nil {
		t.Fatal(err)
	}
	dl := DeadLetter{
		Consumer: "dedup-test", Subject: testSubject, Data: []byte("x"),
		Header: nats.Header{nats.MsgIdHdr: {"id-1"}, "Nats-Expected-Stream": {"PAYMENTS"}},
		Stream: "PAYMENTS", Sequence: 7, Reason: Permanent(errors.New("no")),
	}
	for range 2 {
		if err := d.Send(context.Background(), dl); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	got := deadLetters(t, b.js, 1)[0]
	if id := got.Header.Get(nats.MsgIdHdr); id != "dedup-test:id-1" {
		t.Errorf("Nats-Msg-Id %q, want dedup-test:id-1", id)
	}
	if v := metricValue(t, reg, "bus_dead_letters_total", map[string]string{"consumer": "dedup-test", "reason_kind": ReasonPermanent}); v != 1 {
		t.Errorf("bus_dead_letters_total = %v, want 1", v)
	}
	// A second DeadLetterer on the same registry shares the counter.
	if _, err := NewDeadLetterer(b.js, reg); err != nil {
		t.Errorf("second dead-letterer on one registry: %v", err)
	}
}
