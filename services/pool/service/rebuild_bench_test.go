package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
)

// BenchmarkPoolRebuild measures the blue/green rebuild of the pool read tables from the event
// store, in events per second: b.N debits over 10 pools, recorded 1000 per append (not
// timed), then one projection.Rebuild. Run with a fixed count, for example -benchtime 100000x.
func BenchmarkPoolRebuild(b *testing.B) {
	e := newConsumerEnv(b, 0)
	ctx := context.Background()
	repo := adapters.NewRepository(e.db)
	pools := make([]domain.ID, 10)
	for i := range pools {
		pools[i] = newPoolID(b, "live")
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
		if err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
			if err := repo.LockPools(ctx, tx, id); err != nil {
				return err
			}
			_, err := repo.RecordFacts(ctx, tx, id, facts)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	store := eventstore.New(e.db)
	total, err := store.Count(ctx, e.db)
	if err != nil {
		b.Fatal(err)
	}
	def := adapters.ReadModelDefinition(store, adapters.Schema)
	b.ResetTimer()
	res, err := projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{})
	b.StopTimer()
	if err != nil || res.Events != total {
		b.Fatalf("rebuild: %+v %v (%d events)", res, err, total)
	}
	b.ReportMetric(float64(res.Events)/b.Elapsed().Seconds(), "events/s")
}
