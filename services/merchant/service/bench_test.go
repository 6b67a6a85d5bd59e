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
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
	b.StopTimer()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}
