package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/testkit"
)

// Issue 41's class on the dispatcher's intake: a valid event whose deliveries can never be
// stored (here a trigger refuses company "poison"'s rows, standing for any failure of one event
// that validation did not foresee) used to make the intake read the stream again from its
// stored positions for ever, so that no company's webhooks were created. Now the batch is
// created one event at a time, the other companies' deliveries go out, and the event that
// fails alone is dead-lettered after its bounded retries.
func TestRegressionOneEventWhoseDeliveriesCannotBeStoredStopsNoOtherCompany(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	h.configure("poison", rc.srv.URL, false)
	ctx := context.Background()
	if _, err := h.db.Exec(ctx, `
        CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.company_id = 'poison' THEN RAISE EXCEPTION 'refused by the test for company %', NEW.company_id; END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_poison BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION refuse_poison();`); err != nil {
		t.Fatal(err)
	}
	h.publish(catalogueEvent(t, events.TypePaymentCreated, "acme"))
	h.publish(catalogueEvent(t, events.TypePaymentCreated, "poison"))
	for range 3 {
		h.publish(catalogueEvent(t, events.TypePaymentConfirmed, "acme"))
	}
	// acme's four deliveries are created and attempted while poison's event is retried.
	h.waitDeliveries("acme", 4, 1)
	testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if n := len(rc.got()); n < 4 {
			return fmt.Errorf("receiver got %d webhooks, want 4", n)
		}
		return nil
	})
	// poison's event goes to the dead-letter stream after its retries, with the reason.
	var letter *jetstream.RawStreamMsg
	testkit.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		s, err := h.js.Stream(ctx, bus.DeadLetterStream)
		if err != nil {
			return err
		}
		m, err := s.GetMsg(ctx, 1)
		if err != nil {
			return err
		}
		letter = m
		return nil
	})
	if got := letter.Header.Get(bus.HeaderDLQOriginalSubject); got != "payment.test.poison.created" {
		t.Errorf("dead letter of %q, want poison's event", got)
	}
	if got := letter.Header.Get(bus.HeaderDLQReasonKind); got != bus.ReasonExhausted {
		t.Errorf("reason kind %q, want %q", got, bus.ReasonExhausted)
	}
	if r := letter.Header.Get(bus.HeaderDLQReason); !strings.Contains(r, "refused by the test") {
		t.Errorf("reason %q does not carry the cause", r)
	}
	// And the intake moved past it: later events of both companies flow.
	h.publish(catalogueEvent(t, events.TypePaymentConfirmed, "acme"))
	h.waitDeliveries("acme", 5, 1)
	h.waitConsumed()
	if n := len(h.deliveries("poison")); n != 0 {
		t.Fatalf("%d deliveries of poison", n)
	}
}
