package projection_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"
)

// appliedRows returns the stream sequences of the ids the test projection recorded.
func appliedRows(t *testing.T, e *streamEnv) map[int64]bool {
	t.Helper()
	rows, err := e.db.Query(context.Background(), `SELECT stream_seq FROM projection_applied WHERE projection = 'test_payments'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	all := map[int64]bool{}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		all[seq] = true
	}
	return all
}

// waitAckFloor waits until the consumer has every delivered message acknowledged up to seq.
func waitAckFloor(t *testing.T, c jetstream.Consumer, seq uint64) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		info, err := c.Info(context.Background())
		if err != nil {
			return err
		}
		if info.AckFloor.Stream < seq {
			return fmt.Errorf("ack floor %d, want %d", info.AckFloor.Stream, seq)
		}
		return nil
	})
}

// projection_applied no longer grows for ever (issue 16): the Pruner deletes, in batches, the ids
// at or below the consumer's ack floor (JetStream never redelivers those) once they are older
// than the retention, and keeps the others: those above the floor, and the recent ones (a late
// re-publish of the same event is told applied by its id). It raises the projection's watermark
// to the floor, so that even a consumer re-created from the start of the stream applies nothing
// twice.
func TestPrunerDeletesAppliedIdsBelowTheAckFloor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStreamEnv(t)
	r := e.runner(t, &paymentsProjector{})
	for i := range 30 {
		e.publishPayment(t, payment(i), "")
	}
	drain(t, r)
	waitAckFloor(t, e.cons, 30)
	assertEachOnce(t, table(t, e.db), 30)

	// Recent ids stay, whatever the floor.
	keep, err := projection.NewPruner(e.db, e.cons, "test_payments", projection.PruneOptions{Retention: time.Hour, Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := keep.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("Prune with a 1h retention deleted %d (%v), want 0", n, err)
	}
	// Once old enough, the 30 go, 7 at a time; an id above the floor (a message delivered but
	// not yet acknowledged) stays however old.
	if _, err := e.db.Exec(ctx, `UPDATE projection_applied SET applied_at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(ctx, `INSERT INTO projection_applied (projection, event_id, stream_seq, applied_at)
        VALUES ('test_payments', gen_random_uuid(), 31, now() - interval '2 hours')`); err != nil {
		t.Fatal(err)
	}
	n, err := keep.Prune(ctx)
	if err != nil || n != 30 {
		t.Fatalf("Prune deleted %d (%v), want the 30 at or below the floor", n, err)
	}
	if left := appliedRows(t, e); len(left) != 1 || !left[31] {
		t.Fatalf("left %v, want only the id above the floor (31)", left)
	}
	var watermark int64
	if err := e.db.QueryRow(ctx, `SELECT stream_seq FROM projection_watermarks
        WHERE projection = 'test_payments' AND stream = 'PAYMENTS'`).Scan(&watermark); err != nil || watermark != 30 {
		t.Fatalf("watermark %d (%v), want the ack floor 30", watermark, err)
	}

	// The consumer re-created from the start of the stream: every message comes again, and the
	// watermark tells them applied although their ids are gone.
	if err := e.js.DeleteConsumer(ctx, "PAYMENTS", "test-payments"); err != nil {
		t.Fatal(err)
	}
	if e.cons, err = e.js.CreateOrUpdateConsumer(ctx, "PAYMENTS", jetstream.ConsumerConfig{
		Durable: "test-payments", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	}); err != nil {
		t.Fatal(err)
	}
	drain(t, e.runner(t, &paymentsProjector{}))
	assertEachOnce(t, table(t, e.db), 30)
}
