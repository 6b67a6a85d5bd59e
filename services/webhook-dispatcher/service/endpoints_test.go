package service_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/webhook-dispatcher/ports"
)

const paymentDurable = "webhook-dispatcher-payment"

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
	h.waitConsumed("PAYMENTS", paymentDurable)
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
	h.waitConsumed("PAYMENTS", paymentDurable)
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

// A stream whose events are all webhook events is consumed through its wildcard, and a
// durable created with the older list of filter subjects is updated in place on start: it
// keeps its position (an event acknowledged before is not delivered again) and delivers what
// was published while the dispatcher was down. An event type this binary does not know,
// which the wildcard brings too, is acknowledged and skipped, not dead-lettered.
func TestConsumerFilterUpdatedInPlace(t *testing.T) {
	var spec bus.ConsumerSpec
	for _, s := range ports.ConsumerSpecs() {
		switch s.Stream {
		case "PAYMENTS":
			spec = s
			if !slices.Equal(s.FilterSubjects, []string{"payment.>"}) {
				t.Fatalf("PAYMENTS filters %v, want [payment.>]", s.FilterSubjects)
			}
		case "POOL":
			if len(s.FilterSubjects) != 3 {
				t.Fatalf("POOL filters %v, want the 3 catalogue subjects", s.FilterSubjects)
			}
		}
	}
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	h.publish(catalogueEvent(t, events.TypePaymentCreated, "acme"))
	h.waitDeliveries("acme", 1, 1)
	h.waitConsumed("PAYMENTS", paymentDurable)
	if err := h.s.Stop(); err != nil {
		t.Fatal(err)
	}

	// The durable as the previous version of the dispatcher configured it.
	old := spec
	old.FilterSubjects = nil
	for _, name := range []string{"created", "processing", "confirmed", "failed", "expired"} {
		old.FilterSubjects = append(old.FilterSubjects, events.Subject(events.FamilyPayment, "*", "*", name))
	}
	c, err := bus.EnsurePullConsumer(context.Background(), h.js, old)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := c.Info(context.Background()); err != nil || len(info.Config.FilterSubjects) != 5 {
		t.Fatalf("old consumer: %v, %v", info, err)
	}
	next := catalogueEvent(t, events.TypePaymentConfirmed, "acme")
	h.publish(next)
	h.publishRaw("payment.test.acme.refunded", []byte("a type this binary does not know"))

	h.restart()
	rows := h.waitDeliveries("acme", 2, 1)
	if rows[1].EventID.String() != events.Meta(next).GetEventId() {
		t.Fatalf("second delivery is event %s, want %s", rows[1].EventID, events.Meta(next).GetEventId())
	}
	info := h.waitConsumed("PAYMENTS", paymentDurable)
	if info.Config.FilterSubject != "payment.>" || len(info.Config.FilterSubjects) != 0 {
		t.Fatalf("consumer filters after start: %q %v", info.Config.FilterSubject, info.Config.FilterSubjects)
	}
	if n := h.deliveryCount(); n != 2 {
		t.Fatalf("%d delivery rows, want 2", n)
	}
	if n := len(rc.got()); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
	if n := h.deadLetters(); n != 0 {
		t.Fatalf("%d dead letters, want 0", n)
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
	var out ports.ConfigReply
	req := ports.ConfigRequest{CompanyID: company, Environment: "test", Enabled: &enabled}
	if code := h.request(ports.SubjectConfig, req, &out); code != "" {
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
