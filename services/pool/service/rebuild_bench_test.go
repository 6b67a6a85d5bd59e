package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
)

// BenchmarkPoolRebuild measures the blue/green rebuild of the pool read tables from the event
// store, in events per second: b.N debits over 10 pools, recorded 1000 per append (not
// timed), then one projection.Rebuild. In the same run, with the timer stopped, it measures the
// limits a rebuild cannot beat: reading the store in order without decoding (store-rows/s) and
// COPYing as many movement rows into an unindexed table (copy-rows/s). Run with a fixed count:
//
//	cd services/pool && go test -run '^$' -bench PoolRebuild -benchtime 1000000x -timeout 30m ./service/
func BenchmarkPoolRebuild(b *testing.B) {
	e := newConsumerEnv(b, 0)
	ctx := context.Background()
	b.StopTimer()
	repo := adapters.NewRepository(e.db)
	pools := make([]domain.ID, 10)
	for i := range pools {
		pools[i] = newPoolID(b, e.db, "live")
	}
	const batch = 1000
	for done := 0; done < b.N; done += batch {
		id := pools[(done/batch)%len(pools)]
		facts := make([]domain.Fact, min(batch, b.N-done))
		for i := range facts {
			pid := fmt.Sprintf("p-%d", done+i)
			facts[i] = domain.Fact{Type: domain.Debit, Key: domain.DebitKey(pid), Amount: money.MustParse("1.25"),
				TxHash: "0xhash", ConfirmedAt: time.Now(),
				Payment: &domain.PaymentRef{PaymentID: pid, MerchantID: "m", Amount: money.MustParse("1.25")}}
		}
		recordFacts(b, e.db, repo, id, facts)
	}
	store := eventstore.New(e.db)
	total, err := store.Count(ctx, e.db)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rawStoreRate(b, store, total), "store-rows/s")
	b.ReportMetric(rawMovementCopyRate(b, e.db, total), "copy-rows/s")
	def := adapters.ReadModelDefinition(store, adapters.Schema)
	b.StartTimer()
	res, err := projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{})
	b.StopTimer()
	if err != nil || res.Events != total {
		b.Fatalf("rebuild: %+v %v (%d events)", res, err, total)
	}
	b.ReportMetric(float64(res.Events)/b.Elapsed().Seconds(), "events/s")
}

// rawStoreRate reads the whole event store in its order, 10,000 rows at a time, without
// decoding, and returns the rows per second.
func rawStoreRate(b *testing.B, store *eventstore.Store, total int64) float64 {
	ctx := context.Background()
	start := time.Now()
	var (
		pos eventstore.Position
		n   int64
	)
	for {
		recs, err := store.ReadAll(ctx, store.DB(), pos, 10000)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		n += int64(len(recs))
		pos = recs[len(recs)-1].Position
	}
	if n != total {
		b.Fatalf("read %d of %d events", n, total)
	}
	return float64(n) / time.Since(start).Seconds()
}

// rawMovementCopyRate COPYs n rows shaped like debit movements (with their keys) into an
// unindexed table and returns the rows per second.
func rawMovementCopyRate(b *testing.B, db *pgxpool.Pool, n int64) float64 {
	now := time.Now().UTC()
	pid, merchant, name := "p-1", "m", "Merchant"
	amount := int64(1_250_000)
	row := []any{uuid.Nil, "company", "live", int64(0), "DEBIT", -amount, int64(0), -amount,
		"CONFIRMED", "0xhash", "Payment p-1", &pid, &amount, &merchant, &name, nil, nil, now, &now, "debit:p-1"}
	return testkit.CopyRate(b, db, "movements", []string{"id", "company_id", "environment", "seq",
		"type", "amount", "balance_before", "balance_after", "status", "tx_hash", "description", "payment_id",
		"payment_amount", "merchant_id", "merchant_name", "withdrawal_id", "to_address", "created_at", "confirmed_at", "key"},
		n, func(i int64, values []any) {
			copy(values, row)
			values[0], values[3], values[19] = pgtype.UUID{Bytes: uuid.New(), Valid: true}, i, fmt.Sprintf("debit:p-%d", i)
		})
}
