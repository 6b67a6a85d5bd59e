package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/services/webhook-dispatcher/api"
	"github.com/payplat/platform/services/webhook-dispatcher/ports"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

// Events of a company without an endpoint create no delivery rows; an endpoint configured
// afterwards receives the next event, a disabled one none, and one enabled again the next.
// (The dispatcher neither renders nor stores events of companies without an enabled endpoint,
// looking the endpoints up for every batch; this proves the lookup is never stale.)
func TestEndpointConfiguredLaterReceivesTheNextEvent(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	for _, typ := range []string{events.TypePaymentCreated, events.TypePaymentProcessing, events.TypePaymentConfirmed} {
		h.publish(catalogueEvent(t, typ, "late"))
	}
	h.waitConsumed()
	if n := h.deliveryCount(); n != 0 {
		t.Fatalf("%d delivery rows before any endpoint, want 0", n)
	}

	h.configure("late", rc.srv.URL, false)
	first := catalogueEvent(t, events.TypePaymentCreated, "late")
	h.publish(first)
	rows := h.waitDeliveries("late", 1, 1)
	if rows[0].EventID.String() != events.Meta(first).GetEventId() {
		t.Fatalf("delivered event %s, want %s", rows[0].EventID, events.Meta(first).GetEventId())
	}

	h.setEnabled("late", false)
	h.publish(catalogueEvent(t, events.TypePaymentProcessing, "late"))
	h.waitConsumed()
	if n := h.deliveryCount(); n != 1 {
		t.Fatalf("%d delivery rows with the endpoint disabled, want 1", n)
	}

	h.setEnabled("late", true)
	again := catalogueEvent(t, events.TypePaymentConfirmed, "late")
	h.publish(again)
	rows = h.waitDeliveries("late", 2, 1)
	if rows[1].EventID.String() != events.Meta(again).GetEventId() {
		t.Fatalf("delivered event %s, want %s", rows[1].EventID, events.Meta(again).GetEventId())
	}
	if n := len(rc.got()); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
}

// A deployment of the dispatcher from before its events stream had a durable consumer per
// event stream: the copy of each stream starts where that consumer had got to (an event it had
// taken is not delivered again, one published while the dispatcher was down is), and the old
// consumer is deleted. An event type this binary does not know is not copied, and not
// dead-lettered either.
func TestLegacyConsumerRetiredWithoutLosingOrRepeatingEvents(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	if err := h.s.Stop(); err != nil {
		t.Fatal(err)
	}
	// The state the previous version left: no events stream, its durable on PAYMENTS having
	// taken the first event.
	ctx := context.Background()
	if err := h.js.DeleteStream(ctx, ports.EventsStream); err != nil {
		t.Fatal(err)
	}
	legacy, err := bus.EnsurePullConsumer(ctx, h.js, bus.ConsumerSpec{Stream: "PAYMENTS",
		Durable: "webhook-dispatcher-payment", FilterSubjects: []string{"payment.>"}})
	if err != nil {
		t.Fatal(err)
	}
	taken := catalogueEvent(t, events.TypePaymentCreated, "acme")
	h.publish(taken)
	msgs, err := legacy.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range msgs.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	next := catalogueEvent(t, events.TypePaymentConfirmed, "acme")
	h.publish(next)
	h.publishRaw("payment.test.acme.refunded", []byte("a type this binary does not know"))

	h.uncopied = 1 // the event the old consumer had taken
	h.s = svctest.StartOn(t, service.Options(h.cfg), h.s.DatabaseURL, h.s.NATSURL)
	rows := h.waitDeliveries("acme", 1, 1)
	if rows[0].EventID.String() != events.Meta(next).GetEventId() {
		t.Fatalf("delivered event %s, want %s (the one the old consumer had not taken)", rows[0].EventID, events.Meta(next).GetEventId())
	}
	h.waitConsumed()
	if _, err := h.js.Consumer(ctx, "PAYMENTS", "webhook-dispatcher-payment"); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("the old consumer: %v, want it deleted", err)
	}
	if n := h.deliveryCount(); n != 1 || len(rc.got()) != 1 || h.deadLetters() != 0 {
		t.Fatalf("%d deliveries, %d requests, %d dead letters; want 1, 1, 0", n, len(rc.got()), h.deadLetters())
	}
}

func (h *harness) deliveryCount() int {
	h.t.Helper()
	var n int
	if err := h.db.QueryRow(context.Background(), `SELECT count(*) FROM deliveries`).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) setEnabled(company string, enabled bool) {
	h.t.Helper()
	var out api.ConfigReply
	req := api.ConfigRequest{CompanyID: company, Environment: "test", Enabled: &enabled}
	if code := h.request(api.Subject(api.EndpointConfig), req, &out); code != "" {
		h.t.Fatalf("configure: error %s", code)
	}
	if out.Enabled != enabled {
		h.t.Fatalf("endpoint enabled %v, want %v", out.Enabled, enabled)
	}
}

func (h *harness) publishRaw(subject string, data []byte) {
	h.t.Helper()
	if _, err := h.js.Publish(context.Background(), subject, data, jetstream.WithMsgID(uuid.NewString())); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) deadLetters() uint64 {
	h.t.Helper()
	dl, err := h.js.Stream(context.Background(), "DEADLETTER")
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := dl.Info(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return info.State.Msgs
}
