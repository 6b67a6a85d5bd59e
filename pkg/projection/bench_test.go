package projection_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// batchProjector writes a batch with one set-based statement, the way read models should.
type batchProjector struct{ paymentsProjector }

func (p *batchProjector) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	ids := make([]string, len(evs))
	amounts := make([]string, len(evs))
	for i, ev := range evs {
		pc := ev.Msg.(*paymentv1.PaymentCreated)
		ids[i], amounts[i] = pc.GetPaymentId(), pc.GetAmount()
	}
	_, err := tx.Exec(ctx, `INSERT INTO test_payments (payment_id, amount)
        SELECT * FROM unnest($1::text[], $2::text[])
        ON CONFLICT (payment_id) DO UPDATE SET applied = test_payments.applied + 1`, ids, amounts)
	return err
}

// BenchmarkStoreProjectionApply measures a store-fed projection applying b.N events in
// batches of 1000 (decode, validate, set-based upsert, checkpoint), events appended first.
func BenchmarkStoreProjectionApply(b *testing.B) {
	db := newDB(b)
	store := eventstore.New(db)
	ctx := context.Background()
	const per = 1000
	for i := 0; i < b.N; i += per {
		evs := make([]eventstore.Event, 0, per)
		for j := i; j < min(i+per, b.N); j++ {
			e, err := eventstore.NewEvent(payment(j))
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, e)
		}
		if _, err := store.Append(ctx, fmt.Sprintf("bench-%d", i), eventstore.NoStream, evs...); err != nil {
			b.Fatal(err)
		}
	}
	r := projection.NewStoreRunner(store, &batchProjector{}, projection.StoreRunnerOptions{BatchSize: per})
	b.ResetTimer()
	n, err := r.CatchUp(ctx)
	if err != nil || n != b.N {
		b.Fatalf("applied %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
