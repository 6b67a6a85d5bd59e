package service_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/merchant/api"
)

// BenchmarkCreateOverNATS: merchants created per second through the merchant service's NATS
// command API (validation, HD wallet derivation, event append and read tables), 64 callers.
func BenchmarkCreateOverNATS(b *testing.B) {
	s := newStack(b)
	run := uuid.NewString()[:8]
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	for w := 0; w < 64; w++ {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				_, err := s.client.Create(context.Background(), "", api.CreateRequest{CompanyID: "c1", Environment: "test",
					Name: "Shop", Email: fmt.Sprintf("m%d-%s@example.com", i, run)})
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkLedgerCredits: payment.confirmed events turned into merchant ledger credits per
// second by the ledger consumer (decode, de-duplication, aggregate, append, read tables), for
// 20 merchants. The events are on the stream before the consumer starts.
func BenchmarkLedgerCredits(b *testing.B) {
	s := newStack(b)
	var ms []api.Merchant
	for range 20 {
		ms = append(ms, s.mustCreate("c1", "test"))
	}
	if err := s.svc.Stop(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		s.publish(confirmed(ms[i%len(ms)], fmt.Sprintf("pay-%d", i), "1.25"), "")
	}
	b.ResetTimer()
	s.start()
	waitFor(b, func() error {
		if n := s.count(`SELECT count(*) FROM merchant_ledger`); n < b.N {
			return fmt.Errorf("%d of %d entries", n, b.N)
		}
		return nil
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "credits/s")
}
