package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/payment-projection/ports"
	"github.com/payplat/platform/services/payment-projection/service"
)

// batchOnly hides the projector's bulk loader: a rebuild then applies every batch through
// ApplyBatch.
type batchOnly struct{ projection.BatchProjector }

// After confirmed, failed and expired lifecycles, events out of order, and payments that
// expired before their on-chain outcome arrived, a bulk build (facts COPYed, payments folded
// once at the end) and an event-by-event build both equal the live tables; a rebuild swaps one in
// (with the old table's indexes, constraints, statistics and columns) while the service runs,
// and the live consumer goes on applying on the new tables.
func TestPaymentsRebuildEqualsLive(t *testing.T) {
	e := newEnv(t)
	e.start(serviceConfig(50))
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var msgs, later []proto.Message
	for i := range 60 {
		l := newLifecycle(fmt.Sprintf("company-%d", i%3), base.Add(time.Duration(i)*time.Minute))
		switch i % 6 {
		case 0, 1:
			msgs = append(msgs, l.created(), l.processing(), l.confirmed())
		case 2:
			msgs = append(msgs, l.created(), l.processing(), l.failed())
		case 3:
			msgs = append(msgs, l.created(), l.expired())
		case 4: // out of order
			msgs = append(msgs, l.confirmed(), l.created(), l.processing())
		case 5: // expired, then the chain's answer (applied in a later batch)
			msgs = append(msgs, l.created(), l.expired())
			later = append(later, l.processing(), l.confirmed())
		}
	}
	for _, m := range msgs {
		e.publishRaw(m)
	}
	e.waitApplied(len(msgs))
	for _, m := range later {
		e.publishRaw(m)
	}
	e.waitApplied(len(msgs) + len(later))
	def := service.Definition(e.js)
	plain := def
	plain.Projector = batchOnly{def.Projector.(projection.BatchProjector)}
	// A loader that keeps two payments in memory writes most rows early, and folds again
	// those whose later facts come after.
	narrow := def
	narrow.Projector = &ports.Projector{OpenPayments: 2}
	for _, c := range []struct {
		name string
		def  projection.Definition
		size int
	}{{"bulk", def, 0}, {"bulk", def, 7}, {"narrow bulk", narrow, 7}, {"batch", plain, 1}} {
		// The batch path gives the live table only in batches of one: when a payment's
		// expiry and its later on-chain outcome land in one batch, ApplyBatch never writes the
		// EXPIRED fold and leaves expiry_published_at empty, where the live consumer (the two
		// events minutes apart, in separate batches) and the bulk load set it.
		diffs, res, err := projection.Verify(ctx, e.db, c.def, projection.RebuildOptions{BatchSize: c.size})
		if err != nil || len(diffs) != 0 || res.Events != int64(len(msgs)+len(later)) {
			t.Fatalf("%s verify (batches of %d): %v %+v %+v", c.name, c.size, err, res, diffs)
		}
	}
	before, schema := e.table(), testkit.TableSchema(t, e.db, "payments")
	if _, err := projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{BatchSize: 25}); err != nil {
		t.Fatal(err)
	}
	if after := e.table(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("payments after the rebuild:\n%v\nbefore:\n%v", after, before)
	}
	// The new table has every index, constraint and statistics object of the old one, and its
	// columns (tenant_id generated and NOT NULL, payment_id COLLATE "C"; migration 3003).
	testkit.AssertTableSchema(t, e.db, "after the rebuild", schema, "payments")
	// The live consumer applies new events on the swapped-in tables.
	l := newLifecycle("company-0", base.Add(time.Hour))
	e.publishRaw(l.created())
	e.publishRaw(l.processing())
	testkit.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		var status string
		err := e.db.QueryRow(ctx, `SELECT status FROM payments WHERE payment_id = $1`, l.payment).Scan(&status)
		if err == nil && status != "PROCESSING" {
			err = fmt.Errorf("status %s", status)
		}
		return err
	})
	if diffs, _, err := projection.Verify(ctx, e.db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the rebuild: %v %+v", err, diffs)
	}
}
