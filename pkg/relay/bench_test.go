package relay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/eventstore"
)

var benchPayload = make([]byte, 300)

// BenchmarkRelay measures store -> JetStream throughput: b.N events are appended first (not
// timed), then the relay publishes them all.
func BenchmarkRelay(b *testing.B) {
	e := newEnvB(b)
	ctx := context.Background()
	appendBulk(b, e.store, b.N)
	r, err := New(e.store, e.js, Config{Name: "merchant", Stream: testStream, BatchSize: 1000, Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(cctx) }()
	waitMsgs(b, e.js, uint64(b.N))
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRawJetStreamAsyncPublish is the raw limit for BenchmarkRelay, measured like
// `nats bench js pub --async`: asynchronous publishes of the same size with a message id,
// acknowledgements awaited.
func BenchmarkRawJetStreamAsyncPublish(b *testing.B) {
	e := newEnvB(b)
	b.ResetTimer()
	const window = 2000
	for i := 0; i < b.N; i += window {
		n := min(window, b.N-i)
		futures := make([]jetstream.PubAckFuture, 0, n)
		for j := 0; j < n; j++ {
			m := nats.NewMsg("merchant.test.c1.created")
			m.Data = benchPayload
			f, err := e.js.PublishMsgAsync(m, jetstream.WithMsgID(uuid.NewString()))
			if err != nil {
				b.Fatal(err)
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func newEnvB(b *testing.B) *env {
	b.Helper()
	return newEnv(b, 0)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func appendBulk(b *testing.B, s *eventstore.Store, n int) {
	ctx := context.Background()
	const per = 1000
	evs := make([]eventstore.Event, 0, per)
	for i := 0; i < n; i += per {
		evs = evs[:0]
		for j := i; j < min(i+per, n); j++ {
			evs = append(evs, eventstore.Event{ID: uuid.New(), Type: "merchant.status_changed",
				Subject: "merchant.test.c1.status_changed", CompanyID: "c1", Environment: "test",
				OccurredAt: time.Now(), Payload: benchPayload})
		}
		if _, err := s.Append(ctx, fmt.Sprintf("bench-%d", i), eventstore.NoStream, evs...); err != nil {
			b.Fatal(err)
		}
	}
}

func waitMsgs(b *testing.B, js jetstream.JetStream, n uint64) {
	for {
		s, err := js.Stream(context.Background(), testStream)
		if err != nil {
			b.Fatal(err)
		}
		info, err := s.Info(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if info.State.Msgs >= n {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
