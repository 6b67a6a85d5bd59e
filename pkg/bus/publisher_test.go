package bus

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/events"
)

func TestNewEventMessageCarriesSubjectIDAndHeadersAndRefusesInvalidEvents(t *testing.T) {
	t.Parallel()
	ev := paymentCreated(1)
	topic, msg, err := NewEventMessage(ev)
	if err != nil {
		t.Fatalf("new event message: %v", err)
	}
	if topic != testSubject || msg.UUID != eventID(1) {
		t.Errorf("topic %q uuid %q, want %q and %q", topic, msg.UUID, testSubject, eventID(1))
	}
	for k, want := range map[string]string{
		HeaderContentType: events.ContentTypeProtobuf, HeaderEventType: "payment.created", HeaderCorrelationID: "req-7f3a",
	} {
		if got := msg.Metadata.Get(k); got != want {
			t.Errorf("metadata %s = %q, want %q", k, got, want)
		}
	}

	bad := paymentCreated(2)
	bad.Amount = "12.1234567"
	if _, _, err := NewEventMessage(bad); !errors.Is(err, events.ErrInvalid) {
		t.Errorf("invalid event: err %v, want ErrInvalid", err)
	}
}

func TestPublishingAnEventTwiceStoresItOnce(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	p := newPublisher(t, b)
	ctx := context.Background()

	ev := paymentCreated(1)
	for range 2 {
		if err := p.PublishEvent(ctx, ev); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	if n := streamMsgs(t, b.js, "PAYMENTS"); n != 1 {
		t.Fatalf("PAYMENTS holds %d messages, want 1", n)
	}
	s, err := b.js.Stream(ctx, "PAYMENTS")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, testSubject)
	if err != nil {
		t.Fatalf("last message: %v", err)
	}
	for k, want := range map[string]string{
		nats.MsgIdHdr: eventID(1), HeaderWatermillUUID: eventID(1),
		HeaderContentType: events.ContentTypeProtobuf, HeaderEventType: "payment.created",
	} {
		if got := m.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}

	bad := paymentCreated(2)
	bad.Status = "NOPE"
	if err := p.PublishEvent(ctx, paymentCreated(3), bad); !errors.Is(err, events.ErrInvalid) {
		t.Errorf("publishing an invalid event: err %v, want ErrInvalid", err)
	}
	if n := streamMsgs(t, b.js, "PAYMENTS"); n != 1 {
		t.Errorf("PAYMENTS holds %d messages after a refused batch, want 1", n)
	}
}
