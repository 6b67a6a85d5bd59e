package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/events"
)

func TestIsPermanentSpotsUnretryableErrorsAndReasonKindNamesThem(t *testing.T) {
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

func TestReasonTextFitsAHeader(t *testing.T) {
	t.Parallel()
	r := reasonText(errors.New("line one\r\nline two\n" + strings.Repeat("é", MaxReasonLength)))
	if strings.ContainsAny(r, "\r\n") || len(r) > MaxReasonLength || !strings.HasPrefix(r, "line one line two é") {
		t.Errorf("reason %q (%d bytes)", r[:40], len(r))
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
