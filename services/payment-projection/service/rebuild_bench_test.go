package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/payment-projection/service"
)

// BenchmarkPaymentsRebuild measures the blue/green rebuild of the payments read tables from
// the PAYMENTS stream, in events per second: b.N payment events (lifecycles of 3 events on
// average, interleaved a thousand payments at a time: created, then processing, then the
// outcome, 80% confirmed, 10% failed after processing, 10% expired) published before the
// timer, then one projection.Rebuild. In the same run, with the timer stopped, it measures
// the two limits a rebuild cannot beat: reading the stream with an ordered consumer and doing
// nothing (js-msgs/s), and COPYing as many fact rows into an unindexed table (copy-rows/s).
//
//	cd services/payment-projection && go test -run '^$' -bench PaymentsRebuild -benchtime 1000000x -timeout 30m ./service/
func BenchmarkPaymentsRebuild(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	b.StopTimer()
	published := publishLifecycles(b, e, b.N)
	b.ReportMetric(rawStreamRate(b, e.js, published), "js-msgs/s")
	b.ReportMetric(rawCopyRate(b, e, published), "copy-rows/s")
	def := service.Definition(e.js)
	b.StartTimer()
	res, err := projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{})
	b.StopTimer()
	if err != nil || res.Events != int64(published) {
		b.Fatalf("rebuild: %+v %v (%d events)", res, err, published)
	}
	b.ReportMetric(float64(res.Events)/b.Elapsed().Seconds(), "events/s")
	var payments int64
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM payments`).Scan(&payments); err != nil || payments == 0 {
		b.Fatalf("%d payments after the rebuild: %v", payments, err)
	}
}

// publishLifecycles publishes n payment events (asynchronously, a window at a time) and
// returns how many the stream holds.
func publishLifecycles(b *testing.B, e *env, n int) int {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const group = 1000
	sent := 0
	publish := func(m proto.Message) {
		subj, err := events.SubjectFor(m)
		if err != nil {
			b.Fatal(err)
		}
		data, err := events.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		msg := &nats.Msg{Subject: subj, Data: data, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderContentType, events.ContentTypeProtobuf)
		msg.Header.Set(nats.MsgIdHdr, events.Meta(m).GetEventId())
		if _, err := e.js.PublishMsgAsync(msg); err != nil {
			b.Fatal(err)
		}
		sent++
		if sent%5000 == 0 {
			waitAsync(b, e.js)
		}
	}
	for g := 0; sent < n; g++ {
		ls := make([]*lifecycle, 0, group)
		for i := 0; i < group && sent+len(ls) < n; i++ {
			l := newLifecycle(fmt.Sprintf("company-%d", i%20), base.Add(time.Duration(g*group+i)*time.Second))
			l.payment = uuid.NewString()
			ls = append(ls, l)
			publish(l.created())
		}
		for i, l := range ls {
			if i%10 != 9 && sent < n {
				publish(l.processing())
			}
		}
		for i, l := range ls {
			if sent >= n {
				break
			}
			switch i % 10 {
			case 9:
				publish(l.expired())
			case 8:
				publish(l.failed())
			default:
				publish(l.confirmed())
			}
		}
	}
	waitAsync(b, e.js)
	info, err := e.js.Stream(ctx, service.Stream)
	if err != nil {
		b.Fatal(err)
	}
	st, err := info.Info(ctx)
	if err != nil || st.State.Msgs != uint64(n) {
		b.Fatalf("the stream holds %d messages, want %d (%v)", st.State.Msgs, n, err)
	}
	return n
}

func waitAsync(b *testing.B, js jetstream.JetStream) {
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("publishing did not complete")
	}
}

// rawStreamRate reads the whole stream with an ordered consumer, fetching as a rebuild does,
// and returns the messages per second.
func rawStreamRate(b *testing.B, js jetstream.JetStream, n int) float64 {
	ctx := context.Background()
	start := time.Now()
	cons, err := js.OrderedConsumer(ctx, service.Stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		b.Fatal(err)
	}
	got := 0
	for got < n {
		batch, err := cons.Fetch(min(10000, n-got), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		for range batch.Messages() {
			got++
		}
		if err := batch.Error(); err != nil && !bus.IsFetchTimeout(err) {
			b.Fatal(err)
		}
	}
	return float64(got) / time.Since(start).Seconds()
}

// rawCopyRate COPYs n rows shaped like payment facts into an unindexed table and returns the
// rows per second.
func rawCopyRate(b *testing.B, e *env, n int) float64 {
	now := time.Now().UTC()
	row := []any{"company-1", "test", "", uuid.Nil, int16(5), "CONFIRMED", "merchant", wallet,
		customer, int64(12_500_000), "0xhash", "https://basescan.org/tx/0xhash", "", &now, &now, &now, nil, now}
	return testkit.CopyRate(b, e.db, "payment_facts", []string{"company_id", "environment", "payment_id",
		"event_id", "rank", "status", "merchant_id", "merchant_wallet", "customer_wallet", "amount_micros", "tx_hash",
		"block_explorer_url", "error_message", "created_at", "expires_at", "confirmed_at", "expired_at", "occurred_at"},
		int64(n), func(_ int64, values []any) {
			copy(values, row)
			id := uuid.New()
			values[2], values[3] = id.String(), id
		})
}
