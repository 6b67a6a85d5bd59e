package bus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkFetching takes b.N messages a stream already holds, acknowledging each, through the
// Fetcher (one long-lived pull subscription) and through nats.go's Fetch of up to 500 per
// batch (a pull request and a subscription per batch: the raw limit of the same server in the
// same run). The server runs in the benchmark's process, so both share its CPU.
func BenchmarkFetching(b *testing.B) {
	fetchers := map[string]func(*testing.B, context.Context, jetstream.Consumer) func() ([]jetstream.Msg, error){
		"fetcher": func(b *testing.B, ctx context.Context, c jetstream.Consumer) func() ([]jetstream.Msg, error) {
			f := &Fetcher{Consumer: c, Max: 500, MaxWait: time.Second}
			b.Cleanup(f.Close)
			return func() ([]jetstream.Msg, error) { return f.Fetch(ctx) }
		},
		"fetch-500": func(_ *testing.B, _ context.Context, c jetstream.Consumer) func() ([]jetstream.Msg, error) {
			return func() ([]jetstream.Msg, error) {
				batch, err := c.Fetch(500, jetstream.FetchMaxWait(time.Second))
				if err != nil {
					return nil, err
				}
				var msgs []jetstream.Msg
				for m := range batch.Messages() {
					msgs = append(msgs, m)
				}
				return msgs, nil
			}
		},
	}
	for _, name := range []string{"fetch-500", "fetcher"} {
		b.Run(name, func(b *testing.B) {
			tb := newTestBus(b)
			ctx := context.Background()
			for i := range b.N {
				if _, err := tb.js.PublishAsync("treasury.test.c1.deposit_detected", fmt.Appendf(nil, "m%d", i)); err != nil {
					b.Fatal(err)
				}
			}
			select {
			case <-tb.js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				b.Fatal("publishing did not complete")
			}
			c, err := EnsurePullConsumer(ctx, tb.js, ConsumerSpec{Stream: "TREASURY", Durable: "bench", MaxAckPending: 1000})
			if err != nil {
				b.Fatal(err)
			}
			fetch := fetchers[name](b, ctx, c)
			b.ResetTimer()
			start := time.Now()
			for taken := 0; taken < b.N; {
				msgs, err := fetch()
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range msgs {
					if err := m.Ack(); err != nil {
						b.Fatal(err)
					}
				}
				taken += len(msgs)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
