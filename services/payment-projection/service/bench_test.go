package service_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/payment-projection/ports"
	"github.com/payplat/platform/services/payment-projection/service"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

// BenchmarkProjectionApply measures how fast the projection applies payment lifecycles
// (created, processing, confirmed) already on the PAYMENTS stream: fetch, decode, dedupe, fold,
// commit and acknowledge, per batch size and number of concurrent workers. One op is one
// lifecycle (three events).
//
//	cd services/payment-projection && go test -run '^$' -bench ProjectionApply -benchtime 20000x ./service/
func BenchmarkProjectionApply(b *testing.B) {
	for _, c := range []struct{ batch, workers int }{{500, 1}, {500, 3}} {
		b.Run(fmt.Sprintf("batch=%d/workers=%d", c.batch, c.workers), func(b *testing.B) {
			benchApply(b, c.batch, c.workers)
		})
	}
}

func benchApply(b *testing.B, batch, workers int) {
	e := newEnv(b)
	ctx := context.Background()
	if err := loadgen.Publish(ctx, e.js, loadgen.Tenants(20, 10), b.N, 1000); err != nil {
		b.Fatal(err)
	}
	consumer, err := bus.EnsurePullConsumer(ctx, e.js, service.ConsumerSpec(batch))
	if err != nil {
		b.Fatal(err)
	}
	noDeadLetters := func(context.Context, string, jetstream.Msg, error) error {
		return fmt.Errorf("unexpected dead letter")
	}
	runners := make([]*projection.StreamRunner, workers)
	for i := range runners {
		runners[i], err = projection.NewStreamRunner(e.db, consumer, service.Durable, ports.NewProjector(),
			projection.StreamRunnerOptions{BatchSize: batch, MaxWait: 200 * time.Millisecond, DeadLetter: noDeadLetters})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	var (
		done     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for _, r := range runners {
		wg.Go(func() {
			defer r.Close()
			for done.Load() < int64(3*b.N) {
				n, err := r.Step(ctx)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				done.Add(int64(n))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "lifecycles/s")
}
