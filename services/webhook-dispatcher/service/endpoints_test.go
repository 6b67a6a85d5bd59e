package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
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

// forgetPositions stops the dispatcher and brings its database back to the state an earlier
// version left: partitions without positions.
func (h *harness) forgetPositions() {
	h.t.Helper()
	if err := h.s.Stop(); err != nil {
		h.t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM partition_positions`, `DELETE FROM partition_leases`} {
		if _, err := h.db.Exec(context.Background(), q); err != nil {
			h.t.Fatal(err)
		}
	}
}

// A deployment of the dispatcher from before the copy stream, with a durable consumer per
// event stream: the intake of each stream starts where that consumer had got to (an event it
// had taken is not delivered again, one published while the dispatcher was down is), and the
// old consumer is deleted. An event type this binary does not know is skipped, not
// dead-lettered.
func TestLegacyConsumerRetiredWithoutLosingOrRepeatingEvents(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	h.forgetPositions()
	ctx := context.Background()
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

	h.s = svctest.StartOn(t, service.Options(h.cfg), h.s.DatabaseURL, h.s.NATSURL)
	rows := h.waitDeliveries("acme", 1, 1)
	if rows[0].EventID.String() != events.Meta(next).GetEventId() {
		t.Fatalf("delivered event %s, want %s (the one the old consumer had not taken)", rows[0].EventID, events.Meta(next).GetEventId())
	}
	h.waitConsumed()
	testkit.WaitFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if _, err := h.js.Consumer(ctx, "PAYMENTS", "webhook-dispatcher-payment"); !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("the old consumer: %v, want it deleted", err)
		}
		return nil
	})
	if n := h.deliveryCount(); n != 1 || len(rc.got()) != 1 || h.deadLetters() != 0 {
		t.Fatalf("%d deliveries, %d requests, %d dead letters; want 1, 1, 0", n, len(rc.got()), h.deadLetters())
	}
}

// A deployment of the version that read the copy stream WEBHOOK_EVENTS (the catalogue events
// of PAYMENTS and POOL as webhooks.<partition>.<subject>, a durable consumer per partition): each
// partition's intake starts below the first copy its consumer had not acknowledged. An event
// the partition had taken is not delivered again; the others are delivered once: a copy it had
// not acknowledged, one of another stream, and one the copy never reached. The copy stream is
// deleted.
func TestCopyStreamRetiredWithoutLosingOrRepeatingEvents(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	h.forgetPositions()
	ctx := context.Background()
	taken := catalogueEvent(t, events.TypePaymentCreated, "acme")
	deposit := catalogueEvent(t, events.TypePoolDepositReceived, "acme")
	copied := catalogueEvent(t, events.TypePaymentProcessing, "acme")
	for _, ev := range []proto.Message{taken, deposit, copied} {
		h.publish(ev)
	}
	// The copy sources PAYMENTS, then POOL (so that the copies' order is known).
	cfg := jetstream.StreamConfig{Name: ports.RetiredCopy}
	copies := func(want uint64) {
		t.Helper()
		testkit.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
			st, err := h.js.Stream(ctx, ports.RetiredCopy)
			if err != nil {
				return err
			}
			if n := st.CachedInfo().State.Msgs; n != want {
				return fmt.Errorf("%d copies, want %d", n, want)
			}
			return nil
		})
	}
	for _, src := range []struct{ stream, family string }{{"PAYMENTS", "payment"}, {"POOL", "pool"}} {
		cfg.Sources = append(cfg.Sources, &jetstream.StreamSource{Name: src.stream,
			SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: src.family + ".*.*.*",
				Destination: "webhooks.{{partition(8,2)}}." + src.family + ".{{wildcard(1)}}.{{wildcard(2)}}.{{wildcard(3)}}"}}})
		if _, err := h.js.CreateOrUpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		copies(map[string]uint64{"PAYMENTS": 2, "POOL": 3}[src.stream])
	}
	cp, err := h.js.Stream(ctx, ports.RetiredCopy)
	if err != nil {
		t.Fatal(err)
	}
	consumers := make([]jetstream.Consumer, 8)
	for i := range consumers {
		if consumers[i], err = cp.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable: fmt.Sprintf("webhook-dispatcher-p%d", i), FilterSubject: fmt.Sprintf("webhooks.%d.>", i),
			AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	// acme's partition took its first copy (payment.created) and not yet the others.
	p := ports.PartitionOf("acme", 8)
	msgs, err := consumers[p].Fetch(3, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range msgs.Messages() {
		if strings.HasSuffix(m.Subject(), ".created") {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		} else if err := m.Nak(); err != nil {
			t.Fatal(err)
		}
	}
	// The copy stops copying; a last event is not copied.
	cfg.Sources = nil
	if _, err := h.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	late := catalogueEvent(t, events.TypePaymentConfirmed, "acme")
	h.publish(late)

	h.s = svctest.StartOn(t, service.Options(h.cfg), h.s.DatabaseURL, h.s.NATSURL)
	h.waitConsumed()
	rows := h.waitDeliveries("acme", 3, 1)
	got := map[string]bool{}
	for _, r := range rows {
		got[r.EventID.String()] = true
	}
	for _, ev := range []proto.Message{deposit, copied, late} {
		if !got[events.Meta(ev).GetEventId()] {
			t.Fatalf("event %s (%T) not delivered; delivered %v", events.Meta(ev).GetEventId(), ev, got)
		}
	}
	testkit.WaitFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if _, err := h.js.Stream(ctx, ports.RetiredCopy); !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("the copy stream: %v, want it deleted", err)
		}
		return nil
	})
	if n := h.deliveryCount(); n != 3 || len(rc.got()) != 3 || h.deadLetters() != 0 {
		t.Fatalf("%d deliveries, %d requests, %d dead letters; want 3, 3, 0", n, len(rc.got()), h.deadLetters())
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

// An event stream created again by an operator numbers its messages from 1 again: the
// dispatcher reads them as the new messages they are, instead of taking them for the ones it
// had read.
func TestRecreatedStreamIsReadFromItsStart(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	ctx := context.Background()
	for _, typ := range []string{events.TypePaymentCreated, events.TypePaymentProcessing} {
		h.publish(catalogueEvent(t, typ, "acme"))
	}
	h.waitDeliveries("acme", 2, 1)
	var cfg jetstream.StreamConfig
	for _, c := range bus.Streams(bus.ProvisionOptions{Replicas: 1, DuplicateWindow: 2 * time.Minute}) {
		if c.Name == "PAYMENTS" {
			cfg = c
		}
	}
	if err := h.js.DeleteStream(ctx, "PAYMENTS"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	again := catalogueEvent(t, events.TypePaymentConfirmed, "acme")
	h.publish(again)
	rows := h.waitDeliveries("acme", 3, 1)
	if rows[2].EventID.String() != events.Meta(again).GetEventId() {
		t.Fatalf("delivered %s third, want %s", rows[2].EventID, events.Meta(again).GetEventId())
	}
	h.waitConsumed()
}
