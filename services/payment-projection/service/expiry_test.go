package service_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/payment-projection/service"
)

// With two replicas running, every PENDING payment past expires_at gets exactly one
// payment.expired published (counted on the wire, before JetStream's de-duplication), and
// payments that are processing or not yet due get none.
func TestExpiryPublishesOncePerPaymentWithTwoReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var published atomic.Int64
	sub, err := e.nc.Subscribe("payment.*.*.expired", func(*nats.Msg) { published.Add(1) })
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
	for range due {
		l := newLifecycle(company, past.Add(-time.Minute))
		l.expires = past
		e.publishRaw(l.created())
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
	e.start(cfg)
	e.start(cfg)
	e.waitApplied(events + due)
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
	e.waitApplied(events + due + 2)
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := published.Load(); n < due+1 {
			return fmt.Errorf("%d payment.expired seen", n)
		}
		return nil
	})
	if n := published.Load(); n != due+1 {
		t.Fatalf("payment.expired published %d times, want %d", n, due+1)
	}
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
