package service_test

import (
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/domain"
	"github.com/payplat/platform/services/payment-projection/service"
)

// BenchmarkPaymentsRebuild measures the blue/green rebuild of the payments read tables from
// the PAYMENTS stream, in events per second: b.N payment events (lifecycles of 3 events on
// average, interleaved a thousand payments at a time: created, then processing, then the
// outcome, 80% confirmed, 10% failed after processing, 10% expired) published before the
// timer, then one projection.Rebuild. The NATS server is a process of its own, as in
// production (in the test's process its heap would be scanned by the rebuild's garbage
// collector). In the same run, with the timer stopped, it measures the two limits a rebuild
// cannot beat: reading the stream with an ordered consumer and doing nothing (js-msgs/s), and
// COPYing as many payment rows as there are events into an unindexed table (copy-rows/s; the
// rebuild writes about a third as many). For each of the three it reports the CPU time the
// whole machine spent (PostgreSQL, the NATS server and the test; *-cpu-s), on two cores the
// floor under any rebuild's time being half the CPU work it cannot avoid; for the rebuild also
// the NATS server's share, the test process's (the rebuild's own Go code; PostgreSQL has the
// rest) and its garbage collector's.
//
//	cd services/payment-projection && go test -run '^$' -bench PaymentsRebuild -benchtime 1000000x -timeout 30m ./service/
func BenchmarkPaymentsRebuild(b *testing.B) {
	url, natsPID := testkit.NATSProcess(b)
	e := newEnvOn(b, url)
	ctx := context.Background()
	b.StopTimer()
	published := publishLifecycles(b, e, b.N)
	var rate float64
	b.ReportMetric(machineCPU(b, func() { rate = rawStreamRate(b, e.js, published) }), "read-cpu-s")
	b.ReportMetric(rate, "js-msgs/s")
	b.ReportMetric(machineCPU(b, func() { rate = rawCopyRate(b, e, published) }), "copy-cpu-s")
	b.ReportMetric(rate, "copy-rows/s")
	def := service.Definition(e.js)
	var (
		res projection.RebuildResult
		err error
	)
	gcSample := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(gcSample)
	gcBefore := gcSample[0].Value.Float64()
	natsBefore, _ := testkit.ProcessCPU(natsPID)
	goBefore, _ := testkit.ProcessCPU(os.Getpid())
	b.ReportMetric(machineCPU(b, func() {
		b.StartTimer()
		res, err = projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{})
		b.StopTimer()
	}), "rebuild-cpu-s")
	natsAfter, _ := testkit.ProcessCPU(natsPID)
	goAfter, _ := testkit.ProcessCPU(os.Getpid())
	b.ReportMetric(natsAfter-natsBefore, "rebuild-nats-cpu-s")
	b.ReportMetric(goAfter-goBefore, "rebuild-go-cpu-s")
	metrics.Read(gcSample)
	b.ReportMetric(gcSample[0].Value.Float64()-gcBefore, "rebuild-gc-cpu-s")
	if err != nil || res.Events != int64(published) {
		b.Fatalf("rebuild: %+v %v (%d events)", res, err, published)
	}
	b.ReportMetric(float64(res.Events)/b.Elapsed().Seconds(), "events/s")
	var payments int64
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM payments`).Scan(&payments); err != nil || payments == 0 {
		b.Fatalf("%d payments after the rebuild: %v", payments, err)
	}
}

// machineCPU runs f and returns the CPU seconds every process of the machine spent meanwhile.
func machineCPU(b *testing.B, f func()) float64 {
	before, ok := testkit.MachineCPU()
	f()
	after, _ := testkit.MachineCPU()
	if !ok {
		return 0
	}
	return after - before
}

// publishLifecycles publishes n payment events (asynchronously, a window at a time) and
// returns how many the stream holds.
func publishLifecycles(b *testing.B, e *env, n int) int {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const group = 1000
	sent := 0
	publish := func(m proto.Message) {
		msg := svctest.EventMsg(b, m)
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

// rawStreamRate reads the whole stream with an ordered consumer, iterating as a rebuild does
// (a pull iterator keeping 10,000 messages in flight, one deadline per batch of 10,000), and
// returns the messages per second.
func rawStreamRate(b *testing.B, js jetstream.JetStream, n int) float64 {
	ctx := context.Background()
	start := time.Now()
	cons, err := js.OrderedConsumer(ctx, service.Stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		b.Fatal(err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(10000))
	if err != nil {
		b.Fatal(err)
	}
	defer it.Stop()
	got := 0
	for got < n {
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		for i := 0; i < 10000 && got < n; i++ {
			if _, err := it.Next(jetstream.NextContext(wait)); err != nil {
				cancel()
				b.Fatalf("after %d messages: %v", got, err)
			}
			got++
		}
		cancel()
	}
	return float64(got) / time.Since(start).Seconds()
}

// rawCopyRate COPYs n rows shaped like the rebuild's (a confirmed payment's row with the
// stored bytes of its three facts) into an unindexed table and returns the rows per second.
// The rebuild writes one row per payment, a third as many rows as events. The copy of the table
// (LIKE, without its generation expressions) has tenant_id as a plain NOT NULL column: the rows
// carry their tenant's value, computed once by the database.
func rawCopyRate(b *testing.B, e *env, n int) float64 {
	var tenant int64
	if err := e.db.QueryRow(context.Background(), `SELECT hashtextextended('company-1/test', 0)`).Scan(&tenant); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	k := domain.Key{CompanyID: "company-1", Environment: "test", PaymentID: uuid.NewString()}
	fact := func(status string) domain.Fact {
		return domain.Fact{Key: k, EventID: uuid.New(), Status: status, OccurredAt: now,
			Details: domain.Details{MerchantID: "merchant", MerchantWallet: wallet, AmountMicros: 12_500_000}}
	}
	created, processing, confirmed := fact(domain.StatusCreated), fact(domain.StatusProcessing), fact(domain.StatusConfirmed)
	created.CreatedAt, created.ExpiresAt = &now, &now
	processing.CustomerWallet, processing.TxHash = customer, "0xhash"
	confirmed.CustomerWallet, confirmed.TxHash, confirmed.BlockExplorerURL, confirmed.ConfirmedAt = customer, "0xhash", "https://basescan.org/tx/0xhash", &now
	facts, err := adapters.EncodeFacts([]domain.Fact{created, processing, confirmed})
	if err != nil {
		b.Fatal(err)
	}
	row := []any{"company-1", "test", "", "CONFIRMED", true, "merchant", wallet, customer, int64(12_500_000), "0xhash",
		"https://basescan.org/tx/0xhash", "", now, &now, &now, nil, now, nil, facts, "USDC", tenant}
	return testkit.CopyRate(b, e.db, "payments", []string{"company_id", "environment", "payment_id", "status",
		"has_created", "merchant_id", "merchant_wallet", "customer_wallet", "amount_micros", "tx_hash",
		"block_explorer_url", "error_message", "created_at", "expires_at", "confirmed_at", "expired_at", "updated_at",
		"expiry_published_at", "facts", "currency", "tenant_id"},
		int64(n), func(_ int64, values []any) {
			copy(values, row)
			values[2] = uuid.NewString()
		})
}
