package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// BenchmarkHotPoolDebits measures debits applied per second for one hot pool: b.N
// payment.confirmed for one company are waiting on the PAYMENTS stream, and one consumer
// instance (batches of 1000 messages, one append per batch) records them. Publishing is not
// timed. Run with a fixed count, for example -benchtime 20000x.
func BenchmarkHotPoolDebits(b *testing.B) {
	e := newConsumerEnv(b, 0)
	id := newPoolID(b, e.db, "live")
	publishPayments(b, e.js, id, b.N, 0)
	ctx, stop := context.WithCancel(context.Background())
	b.ResetTimer()
	_, done := e.start(b, ctx, 1000, nil)
	for {
		if n := countMovements(b, e.db, id); n == b.N {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	b.StopTimer()
	stop()
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "debits/s")
}

// BenchmarkRawBatchedInsert is the PostgreSQL limit the hot-pool figure compares with: per
// debit, the same two rows (event, movement with its idempotency key) written with COPY, 1000
// debits per transaction, into copies of the tables without indexes or constraints.
func BenchmarkRawBatchedInsert(b *testing.B) {
	e := newConsumerEnv(b, 0)
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE raw_events (LIKE events INCLUDING DEFAULTS)`,
		`CREATE TABLE raw_movements (LIKE movements INCLUDING DEFAULTS)`,
	} {
		if _, err := e.db.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	payload := make([]byte, 420) // a pool.debited event in protobuf is about 400 bytes
	const batch = 1000
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		n := min(batch, b.N-done)
		evs, movs := make([][]any, n), make([][]any, n)
		now := time.Now()
		for i := range n {
			id, seq := uuid.New(), int64(done+i+1)
			evs[i] = []any{seq, id, "pool-live-c", seq, "pool.debited", "pool.live.c.debited", "c", "live", now, payload}
			movs[i] = []any{id, "c", "live", seq, "DEBIT", int64(-1250000), int64(0), int64(-1250000), "CONFIRMED",
				"0xhash", "Payment p to merchant m", "p", int64(1250000), "m", "", now, now, fmt.Sprintf("debit:p-%d", seq)}
		}
		err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"raw_events"}, []string{"position", "event_id", "stream_id",
				"stream_version", "event_type", "subject", "company_id", "environment", "occurred_at", "payload"},
				pgx.CopyFromRows(evs)); err != nil {
				return err
			}
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"raw_movements"}, []string{"id", "company_id", "environment",
				"seq", "type", "amount", "balance_before", "balance_after", "status", "tx_hash", "description",
				"payment_id", "payment_amount", "merchant_id", "merchant_name", "created_at", "confirmed_at", "key"},
				pgx.CopyFromRows(movs))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "debits/s")
}
