package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/payment-projection/app/command"
	"github.com/payplat/platform/services/payment-projection/domain"
	"github.com/payplat/platform/services/payment-projection/service"
)

// With two replicas running, every PENDING payment past expires_at gets exactly one
// payment.expired published (counted on the wire by event id, before JetStream's
// de-duplication), a payment not yet due gets none, and a processing one ends PROCESSING. Its
// payment.expired may have been published once: when an expiry round runs between the
// projection of its payment.created and of its payment.processing, the expiry fires while the
// on-chain fact is still on the bus, which the design accepts (domain.Rank: the chain wins).
func TestExpiryPublishesOncePerPaymentWithTwoReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var (
		mu        sync.Mutex
		published = map[string]int{} // Nats-Msg-Id (the event id) → publishes
	)
	sub, err := e.nc.Subscribe("payment.*.*.expired", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		published[m.Header.Get(nats.MsgIdHdr)]++
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	company := uuid.NewString()
	past := time.Now().Add(-time.Minute)
	const due = 120
	events := 0
	var dueOnes []*lifecycle
	for range due {
		l := newLifecycle(company, past.Add(-time.Minute))
		l.expires = past
		e.publishRaw(l.created())
		dueOnes = append(dueOnes, l)
		events++
	}
	processing := newLifecycle(company, past.Add(-time.Minute))
	processing.expires = past
	e.publishRaw(processing.created())
	e.publishRaw(processing.processing())
	future := newLifecycle(company, time.Now())
	e.publishRaw(future.created())
	events += 3

	cfg := service.Config{BatchSize: 50, ExpiryInterval: 10 * time.Millisecond, Workers: 2}
	replicas := []*svctest.Started{e.start(cfg), e.start(cfg)}
	expiredID := func(l *lifecycle) string {
		return command.ExpiredEventID(domain.Key{CompanyID: l.company, Environment: l.env, PaymentID: l.payment}).String()
	}
	seen := func(l *lifecycle) int {
		mu.Lock()
		defer mu.Unlock()
		return published[expiredID(l)]
	}
	// Every event is applied: those published, one payment.expired per due payment, and the
	// processing payment's if its expiry fired.
	waitApplied := func(published int) {
		t.Helper()
		e.waitAppliedTo(func() int {
			if seen(processing) > 0 {
				return published + due + 1
			}
			return published + due
		})
	}
	waitApplied(events)
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var expired int
		err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM payments WHERE status = 'EXPIRED'`).Scan(&expired)
		if err != nil {
			return err
		}
		if expired != due {
			return fmt.Errorf("%d expired, want %d", expired, due)
		}
		return nil
	})
	// One more due payment: once it has expired, both replicas have run expiry rounds over the
	// already expired ones too, and none of them may have been published again.
	late := newLifecycle(company, past.Add(-time.Minute))
	late.expires = past
	e.publishRaw(late.created())
	dueOnes = append(dueOnes, late)
	waitApplied(events + 2) // its payment.created and payment.expired
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if seen(late) == 0 {
			return fmt.Errorf("the late payment's payment.expired not seen")
		}
		return nil
	})
	// A payment.expired published again is one of a round that failed after publishing it (a
	// publish or its commit failed): the next round publishes it again, with the same event
	// id. Without a failed round, it would be two replicas claiming the same payment.
	failed := 0
	for _, r := range replicas {
		failed += expiryFailures(t, r)
	}
	again := 0
	for _, l := range append(dueOnes, processing) {
		n := seen(l)
		if n == 0 && l != processing {
			t.Errorf("payment.expired of due payment %s never published", l.payment)
		}
		again += max(n-1, 0)
	}
	if again > 0 {
		t.Logf("%d payment.expired published again after %d failed expiry rounds", again, failed)
	}
	if again > 0 && failed == 0 || again > 100*failed {
		t.Errorf("%d payment.expired published again, with %d failed expiry rounds of up to 100 each", again, failed)
	}
	mu.Lock()
	for _, l := range append(dueOnes, processing) {
		delete(published, expiredID(l))
	}
	if len(published) != 0 {
		t.Errorf("payment.expired published for other payments (the one not yet due?): %v", published)
	}
	mu.Unlock()
	var status string
	if err := e.db.QueryRow(context.Background(), `SELECT status FROM payments WHERE payment_id = $1`,
		processing.payment).Scan(&status); err != nil || status != "PROCESSING" {
		t.Fatalf("processing payment: %q %v", status, err)
	}
	if err := e.db.QueryRow(context.Background(), `SELECT status FROM payments WHERE payment_id = $1`,
		future.payment).Scan(&status); err != nil || status != "CREATED" {
		t.Fatalf("not yet due payment: %q %v", status, err)
	}
}

// expiryFailures reads payment_expiry_round_failures_total from a replica's registry.
func expiryFailures(t *testing.T, s *svctest.Started) int {
	t.Helper()
	families, err := s.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "payment_expiry_round_failures_total" {
			return int(f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	t.Fatal("payment_expiry_round_failures_total is not registered")
	return 0
}

// An expiry round whose publish fails rolls back: it is counted
// (payment_expiry_round_failures_total), nothing is marked, and a round after the failure
// publishes the payment.expired of every due payment; none is lost.
func TestAFailedExpiryRoundIsCountedAndRetriedWithoutLosingAPayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	company := uuid.NewString()
	deadline := time.Now().Add(3 * time.Second)
	const n = 5
	for range n {
		l := newLifecycle(company, time.Now().Add(-time.Minute))
		l.expires = deadline
		e.publishRaw(l.created())
	}
	s := e.start(service.Config{BatchSize: 50, ExpiryInterval: 20 * time.Millisecond, Workers: 1})
	e.waitApplied(n)
	// The PAYMENTS stream takes no more messages: every round's publish fails.
	stream, err := e.js.Stream(ctx, service.Stream)
	if err != nil {
		t.Fatal(err)
	}
	open := stream.CachedInfo().Config
	full := open
	full.MaxMsgs, full.Discard = int64(stream.CachedInfo().State.Msgs), jetstream.DiscardNew
	if _, err := e.js.UpdateStream(ctx, full); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if f := expiryFailures(t, s); f < 2 {
			return fmt.Errorf("%d failed expiry rounds", f)
		}
		return nil
	})
	var marked int
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM payments WHERE expiry_published_at IS NOT NULL OR status <> 'CREATED'`).
		Scan(&marked); err != nil || marked != 0 {
		t.Fatalf("after failed rounds, %d payments marked or changed (%v), want 0", marked, err)
	}
	if _, err := e.js.UpdateStream(ctx, open); err != nil {
		t.Fatal(err)
	}
	e.waitApplied(2 * n)
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var expired int
		if err := e.db.QueryRow(ctx, `SELECT count(*) FROM payments WHERE status = 'EXPIRED' AND expiry_published_at IS NOT NULL`).
			Scan(&expired); err != nil {
			return err
		}
		if expired != n {
			return fmt.Errorf("%d of %d payments expired", expired, n)
		}
		return nil
	})
}
