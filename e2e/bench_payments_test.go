package e2e_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

// The shape of the end-to-end payments load: real companies and merchants, created through the
// gateway before the clock starts.
const (
	benchCompanies         = 50
	benchMerchantsPerCo    = 20
	benchInflight          = 1000 // lifecycles published and not yet acknowledged
	benchTargetRate        = 5000 // lifecycles/s, issue 5
	benchProjectedTimeout  = 15 * time.Minute
	benchProjectedInterval = 100 * time.Millisecond
	benchLagSample         = 5 // lag measured for one payment in 5
	// benchPaymentsConsumers is how many durable consumers the stack has on PAYMENTS
	// (payment-projection, pool, merchant ledger, webhook-dispatcher).
	benchPaymentsConsumers = 4
)

// paymentsBench carries the numbers of one BenchmarkPaymentsEndToEnd run between its parts.
type paymentsBench struct {
	s       *stack
	db      *pgxpool.Pool
	js      jetstream.JetStream // the internal payments publisher's: the load
	ops     jetstream.JetStream // the operator's: the raw benchmarks' own streams, the dead-letter count
	tenants []loadgen.Tenant

	rawJetStream, rawFanout, rawPostgres, designFloor, fullSpeed float64 // lifecycles/s of the last run of each part

	// CPU milliseconds per lifecycle of the last run of each part: the stack at full speed, and
	// by fraction of the full-speed rate the stack paced (lag-*) and the raw fan-out paced.
	stackCPU                  float64
	lagCPU, rawCPU, designCPU map[float64]float64
}

// BenchmarkPaymentsEndToEnd (issue 5): payment lifecycles (payment.created, processing,
// confirmed) published onto the bus for 1,000 real merchants of 50 real companies, on the real
// stack (five service binaries and nats-server as processes, webhooks off: no company has an
// endpoint configured, so the dispatcher consumes and skips), one op = one lifecycle. Its parts:
//
// raw-jetstream, the bus's limit: the same messages published asynchronously to a stream of
// their own and consumed by one durable pull consumer, acknowledged one by one.
//
// raw-jetstream-fanout, the bus's limit for the real topology: the same, with four durable pull
// consumers (as many as the stack has on PAYMENTS) each taking and acknowledging every message
// concurrently.
//
// raw-postgres, the database's limit: COPY of the three rows the projections write per
// lifecycle (a payments row, a pool movement, a merchant ledger entry) into copies of those
// tables, 500 lifecycles per transaction, three writers.
//
// raw-design-floor, the design's own limit: the per-payment work the design asks for (read
// rows, event-store appends, relays) done by hand on the raw fan-out's stream (runDesignFloor),
// meant as an upper bound of the stack's rate in this run (a plain implementation, not a proven
// one).
//
// stack: publish at full speed and wait until the read tables show every lifecycle fully
// projected (payments row CONFIRMED, pool DEBIT movement, merchant ledger PAYMENT entry; counted
// with SQL); lifecycles/s from the first publish, and its ratio to both limits, with the CPU
// each process spent.
//
// raw-jetstream-fanout-full-rate: the raw fan-out paced at the stack's full-speed rate, its
// consumers fetching as the services do (bus.Fetcher): what the bus alone spends per lifecycle
// at that rate, which the stack's full-speed cost includes.
//
// lag-half-rate: publish at half the stack's full-speed rate (2,500/s when the stack part did
// not run) and measure, per payment, the time from the publish of payment.confirmed until all
// three rows are visible (loadgen.LagTracker: one payment in 5 tracked, the outstanding ones
// looked up by key every 15 ms or more); p50, p99 and max.
//
// raw-jetstream-fanout-half-rate, the floor under lag-half-rate: the raw fan-out paced at the
// same rate, its consumers fetching as the services do (bus.Fetcher); the CPU the bus
// alone spends per lifecycle at that rate, and each message's lag to its acknowledgement.
//
// After the half-rate parts, raw-jetstream-fanout-half-rate's log compares the stack's CPU per
// lifecycle at half rate with issue 20's target 1 (at most 1.3× its full-speed cost) and with
// the floor the bus sets (logCPUFloor).
//
// lag-tenth-rate and raw-jetstream-fanout-tenth-rate: the same at a tenth of the full rate.
//
// BENCH_FULL_SPEED paces the paced parts from a fixed rate instead of this run's full speed
// (pacedRate), and BENCH_SERVICE_ENV gives settings to the services only (serviceEnv): two
// runs at the same rates compare a change.
//
//	go test -run '^$' -bench PaymentsEndToEnd -benchtime 50000x -timeout 60m ./e2e/
func BenchmarkPaymentsEndToEnd(b *testing.B) {
	env := append(append([]string{"LOG_LEVEL=error"}, noRateLimits...), profileEnv()...)
	s := newStack(b, append(env, serviceEnv()...)...)
	ctx := context.Background()
	setup := time.Now()
	tenants, err := loadgen.Gateway{URL: s.url, AdminToken: s.creds.AdminToken}.
		CreateTenants(ctx, benchCompanies, benchMerchantsPerCo, 16)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d companies × %d merchants through the gateway in %s", benchCompanies, benchMerchantsPerCo,
		time.Since(setup).Round(time.Millisecond))
	pb := &paymentsBench{s: s, db: s.db(), js: benchJetStream(b, s, natsauth.PaymentsPublisher),
		ops: benchJetStream(b, s, natsauth.Operator), tenants: tenants,
		lagCPU: map[float64]float64{}, rawCPU: map[float64]float64{},
		designCPU: map[float64]float64{}}
	b.Run("raw-jetstream", pb.runRawJetStream)
	b.Run("raw-jetstream-fanout", pb.runRawJetStreamFanout)
	b.Run("raw-postgres", pb.runRawPostgres)
	b.Run("raw-design-floor", pb.runDesignFloor)
	b.Run("stack", pb.runStack)
	b.Run("raw-jetstream-fanout-full-rate", pb.rawFanoutAt(1))
	b.Run("raw-design-floor-full-rate", pb.designFloorAt(1))
	b.Run("lag-half-rate", pb.lagAt(0.5))
	b.Run("raw-design-floor-half-rate", pb.designFloorAt(0.5))
	b.Run("raw-jetstream-fanout-half-rate", pb.rawFanoutAt(0.5))
	b.Run("lag-tenth-rate", pb.lagAt(0.1))
	b.Run("raw-jetstream-fanout-tenth-rate", pb.rawFanoutAt(0.1))
}

// serviceEnv is BENCH_SERVICE_ENV, space-separated NAME=value pairs given to the services'
// processes only (not to nats-server or to this process, whose variables the services inherit
// too): a setting of the services compared at the same load, GOMAXPROCS=1 for example.
func serviceEnv() []string { return strings.Fields(os.Getenv("BENCH_SERVICE_ENV")) }

// benchJetStream is a JetStream context of its own connection, as the NATS user, whose
// asynchronous publish window holds benchInflight lifecycles.
func benchJetStream(b *testing.B, s *stack, user string) jetstream.JetStream {
	nc := s.connectAs(user)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(3*benchInflight+3))
	if err != nil {
		b.Fatal(err)
	}
	return js
}

func (pb *paymentsBench) runStack(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), benchProjectedTimeout)
	defer cancel()
	base, err := loadgen.ReadCounts(ctx, pb.db, pb.tenants)
	if err != nil {
		b.Fatal(err)
	}
	noDeadLetters := pb.deadLetterCheck(b)
	cpuFrom := sampleCPU(ctx, pb.db)
	b.ResetTimer()
	var tail []loadgen.Payment
	stats, err := loadgen.Run(ctx, pb.js, pb.tenants, b.N, loadgen.Options{Inflight: benchInflight,
		OnConfirmed: func(p loadgen.Payment, _ time.Time) { tail = loadgen.KeepTail(tail, p, 50) }})
	if err != nil {
		b.Fatal(err)
	}
	at, err := loadgen.WaitProjected(ctx, pb.db, pb.tenants, base, int64(b.N), tail, benchProjectedInterval, noDeadLetters)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	elapsed := at.Sub(stats.Start)
	pb.fullSpeed = float64(b.N) / elapsed.Seconds()
	b.ReportMetric(pb.fullSpeed, "lifecycles/s")
	b.ReportMetric(stats.Rate(), "published/s")
	if pb.rawJetStream > 0 {
		b.ReportMetric(pb.fullSpeed/pb.rawJetStream, "ratio-to-raw-js")
	}
	if pb.rawFanout > 0 {
		b.ReportMetric(pb.fullSpeed/pb.rawFanout, "ratio-to-raw-js-fanout")
	}
	if pb.rawPostgres > 0 {
		b.ReportMetric(pb.fullSpeed/pb.rawPostgres, "ratio-to-raw-pg")
	}
	if pb.designFloor > 0 {
		b.ReportMetric(pb.fullSpeed/pb.designFloor, "ratio-to-design-floor")
	}
	cpuTo := sampleCPU(ctx, pb.db)
	pb.stackCPU = cpuPerLifecycle(cpuFrom, cpuTo, b.N)
	b.ReportMetric(pb.stackCPU, "cpu-ms/lifecycle")
	if b.N > 1 {
		verdict := "✘"
		if pb.fullSpeed >= benchTargetRate {
			verdict = "✔"
		}
		b.Logf("%d lifecycles fully projected in %s: %.0f lifecycles/s (target %d %s); published in %s (%.0f/s)\n%s",
			b.N, elapsed.Round(time.Millisecond), pb.fullSpeed, benchTargetRate, verdict,
			stats.Elapsed.Round(time.Millisecond), stats.Rate(), cpuBreakdown(cpuFrom, cpuTo, b.N))
	}
}

// deadLetterCheck returns a check that fails once the dead-letter stream holds more messages
// than now: a dead-lettered lifecycle would never be fully projected.
func (pb *paymentsBench) deadLetterCheck(b *testing.B) func(context.Context) error {
	count := func(ctx context.Context) (uint64, error) {
		st, err := pb.ops.Stream(ctx, bus.DeadLetterStream)
		if err != nil {
			return 0, err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return 0, err
		}
		return info.State.Msgs, nil
	}
	base, err := count(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context) error {
		n, err := count(ctx)
		if err != nil {
			return err
		}
		if n > base {
			return fmt.Errorf("%d messages dead-lettered during the run", n-base)
		}
		return nil
	}
}

// lagAt returns the part that measures the projection lag at fraction of the full-speed rate.
func (pb *paymentsBench) lagAt(fraction float64) func(*testing.B) {
	return func(b *testing.B) { pb.runLag(b, fraction) }
}

func (pb *paymentsBench) runLag(b *testing.B, fraction float64) {
	rate := pb.pacedRate(b, fraction)
	ctx, cancel := context.WithTimeout(context.Background(), benchProjectedTimeout)
	defer cancel()
	// The tables were filled within the last minute, before autovacuum's first look: without
	// statistics the planner may walk a whole company's payments for each of the tracker's
	// key lookups. Analyse them as autovacuum soon would.
	if _, err := pb.db.Exec(ctx, `ANALYZE payments.payments, pool.movements,
            merchant.merchant_ledger`); err != nil {
		b.Fatal(err)
	}
	noDeadLetters := pb.deadLetterCheck(b)
	tracker := &loadgen.LagTracker{Interval: 15 * time.Millisecond, SampleEvery: benchLagSample}
	cpuFrom := sampleCPU(ctx, pb.db)
	batchesFrom, err := pb.s.readBatches(ctx)
	if err != nil {
		b.Fatal(err)
	}
	statements := statementsFrom(b, ctx, pb.db, b.Name())
	published := make(chan struct{})
	tracked := make(chan error, 1)
	go func() { tracked <- tracker.Run(ctx, pb.db, published) }()
	b.ResetTimer()
	// Profiles, when asked for, cover the first 80% of the part (at most 25 s).
	profiled := func() {}
	if b.N > 1 {
		profiled = pb.s.profileServices(b, b.Name(), time.Duration(0.8*float64(b.N)/rate*float64(time.Second)))
	}
	stats, err := loadgen.Run(ctx, pb.js, pb.tenants, b.N, loadgen.Options{Inflight: benchInflight, Rate: rate,
		OnConfirmed: tracker.Track})
	close(published)
	profiled()
	if err != nil {
		b.Fatal(err)
	}
	if err := <-tracked; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := noDeadLetters(ctx); err != nil {
		b.Fatal(err)
	}
	lags, lows := tracker.Lags(), tracker.LowerLags()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(stats.Rate(), "published/s")
	b.ReportMetric(ms(loadgen.Percentile(lags, 0.50)), "lag-p50-ms")
	b.ReportMetric(ms(loadgen.Percentile(lags, 0.99)), "lag-p99-ms")
	b.ReportMetric(ms(loadgen.Percentile(lags, 1)), "lag-max-ms")
	// The poller sees a payment projected between two polls: the lags above are the later
	// poll's, these the earlier one's; the real percentiles lie between.
	b.ReportMetric(ms(loadgen.Percentile(lows, 0.50)), "lag-p50-low-ms")
	b.ReportMetric(ms(loadgen.Percentile(lows, 0.99)), "lag-p99-low-ms")
	cpuTo := sampleCPU(ctx, pb.db)
	pb.lagCPU[fraction] = cpuPerLifecycle(cpuFrom, cpuTo, b.N)
	b.ReportMetric(pb.lagCPU[fraction], "cpu-ms/lifecycle")
	if pb.stackCPU > 0 {
		b.ReportMetric(pb.lagCPU[fraction]/pb.stackCPU, "cpu-to-full-speed")
	}
	if b.N > 1 {
		statements()
		batches, err := pb.s.readBatches(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d lifecycles at %.0f/s (asked %.0f/s) over %s, lag of %d sampled payments: p50 %s, p99 %s, max %s "+
			"(at least p50 %s, p99 %s: the poll before)\n%s\n%s",
			b.N, stats.Rate(), rate, stats.Elapsed.Round(time.Millisecond), len(lags), loadgen.Percentile(lags, 0.5),
			loadgen.Percentile(lags, 0.99), loadgen.Percentile(lags, 1), loadgen.Percentile(lows, 0.5),
			loadgen.Percentile(lows, 0.99), cpuBreakdown(cpuFrom, cpuTo, b.N),
			batches.since(batchesFrom))
	}
}

// pacedRate is fraction of the run's full-speed rate (of benchTargetRate when the stack part did
// not run), or of BENCH_FULL_SPEED lifecycles/s when it is set: two runs to compare (before
// and after a change) then publish at the same rates.
func (pb *paymentsBench) pacedRate(b *testing.B, fraction float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv("BENCH_FULL_SPEED"), 64); err == nil && v > 0 {
		return fraction * v
	}
	if pb.fullSpeed > 0 {
		return fraction * pb.fullSpeed
	}
	rate := fraction * benchTargetRate
	b.Logf("no full-speed rate measured in this run: publishing at %.0f lifecycles/s", rate)
	return rate
}

// runRawJetStream publishes the same lifecycles (the same messages, sizes and headers) to a
// stream of their own with the PAYMENTS stream's configuration while one durable pull consumer
// fetches them in batches of 500 and acknowledges each, and reports lifecycles/s from the first
// publish to the last acknowledgement. The stream is deleted afterwards.
func (pb *paymentsBench) runRawJetStream(b *testing.B) {
	pb.rawJetStream, _ = pb.rawJetStreamWith(b, 1, 0)
	b.ReportMetric(pb.rawJetStream, "lifecycles/s")
}

// runRawJetStreamFanout is runRawJetStream with as many durable pull consumers as the real
// stack has on PAYMENTS (payment-projection, pool, merchant ledger, webhook-dispatcher), each
// taking and acknowledging every message, concurrently: the bus's limit for the real topology.
// (Unfiltered, so every consumer takes all three events of a lifecycle; some of the real ones
// filter out a part.)
func (pb *paymentsBench) runRawJetStreamFanout(b *testing.B) {
	pb.rawFanout, _ = pb.rawJetStreamWith(b, benchPaymentsConsumers, 0)
	b.ReportMetric(pb.rawFanout, "lifecycles/s")
}

// rawFanoutAt returns the part that paces the raw fan-out at fraction of the stack's full-speed
// rate: the bus's own cost per lifecycle and its lag (publish to acknowledgement by each
// consumer) at the rate of the lag-* part with the same fraction, the floor under that part.
func (pb *paymentsBench) rawFanoutAt(fraction float64) func(*testing.B) {
	return func(b *testing.B) {
		rate := pb.pacedRate(b, fraction)
		cpuFrom := sampleCPU(context.Background(), pb.db)
		_, lags := pb.rawJetStreamWith(b, benchPaymentsConsumers, rate)
		cpuTo := sampleCPU(context.Background(), pb.db)
		pb.rawCPU[fraction] = cpuPerLifecycle(cpuFrom, cpuTo, b.N)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(loadgen.Percentile(lags, 0.50)), "lag-p50-ms")
		b.ReportMetric(ms(loadgen.Percentile(lags, 0.99)), "lag-p99-ms")
		b.ReportMetric(pb.rawCPU[fraction], "cpu-ms/lifecycle")
		if b.N > 1 {
			b.Logf("%d lifecycles at %.0f/s to %d raw consumers, lag of every message: p50 %s, p99 %s, max %s\n%s",
				b.N, rate, benchPaymentsConsumers, loadgen.Percentile(lags, 0.5), loadgen.Percentile(lags, 0.99),
				loadgen.Percentile(lags, 1), cpuBreakdown(cpuFrom, cpuTo, b.N))
			if fraction == 0.5 {
				pb.logCPUFloor(b, fraction)
			}
		}
	}
}

// cpuBudget is issue 20's target 1: at half the full-speed rate, CPU per lifecycle at most 1.3
// times the full-speed cost.
const cpuBudget = 1.3

// logCPUFloor logs, when the stack, the raw fan-out paced at the full-speed rate and both paced
// at fraction of it have run, where the CPU the stack spends per lifecycle at fraction of the
// rate stands against target 1's budget (cpuBudget × its full-speed cost), and the floors under
// it. A floor is what a raw part spends per lifecycle at that rate plus what the rest of the
// stack spent per lifecycle at full speed (the stack's cost there less the raw part's at the
// same rate). The rest of the stack cannot cost less per lifecycle at a lower rate: its batches
// only get smaller (the stack's own cost at that rate, logged beside, shows how much more it
// is). The raw parts: the bus alone (the raw fan-out: nats-server, the publisher and four
// consumers that only fetch and acknowledge) and, when it ran at both rates, the design's own
// work by hand (the raw design floor, which includes the bus).
func (pb *paymentsBench) logCPUFloor(b *testing.B, fraction float64) {
	stack, paced := pb.stackCPU, pb.lagCPU[fraction]
	if stack == 0 || paced == 0 || pb.rawCPU[1] == 0 || pb.rawCPU[fraction] == 0 {
		return
	}
	budget := cpuBudget * stack
	b.Logf("CPU per lifecycle at %.0f%% of the full-speed rate: the stack %.3f ms (%.2f× its %.3f ms at full speed; "+
		"the budget %.1f× is %.3f ms)", 100*fraction, paced, paced/stack, stack, cpuBudget, budget)
	floor := func(what string, full, atRate float64) {
		rest := stack - full
		f := atRate + max(rest, 0)
		b.Logf("%s: %.3f ms at that rate (%.0f%% of the budget), %.3f ms at the full rate; the rest of the stack at "+
			"full speed %.3f ms. Floor: %.3f ms, %.2f× full speed (%.0f%% of the budget)",
			what, atRate, 100*atRate/budget, full, rest, f, f/stack, 100*f/budget)
	}
	floor("The bus alone", pb.rawCPU[1], pb.rawCPU[fraction])
	if pb.designCPU[1] > 0 && pb.designCPU[fraction] > 0 {
		floor("The design's own work by hand", pb.designCPU[1], pb.designCPU[fraction])
	}
}

// rawJetStreamWith publishes b.N lifecycles (at rate lifecycles/s, or at full speed for 0) to a
// stream of their own with the PAYMENTS stream's configuration while consumers durable pull
// consumers each fetch and acknowledge all of them, and returns lifecycles/s from the first
// publish to the last acknowledgement of the slowest consumer, and each message's lag (from its
// store in the stream to its acknowledgement) in every consumer. The stream is deleted
// afterwards.
func (pb *paymentsBench) rawJetStreamWith(b *testing.B, consumers int, rate float64) (float64, []time.Duration) {
	return pb.rawRun(b, slices.Repeat([]rawConsumer{{}}, consumers), rate, nil)
}

// rawConsumer is one durable pull consumer of a raw part: the subjects it takes (below the raw
// stream's prefix; empty: every message) and what it does with each fetched batch before
// acknowledging its messages one by one (nil: nothing).
type rawConsumer struct {
	filter string
	handle func(ctx context.Context, msgs []jetstream.Msg) error
}

// rawSubjectPrefix starts the subjects of the raw parts' streams (the lifecycles' subjects
// follow it: rawbench.payment.<env>.<company>.<event>).
const rawSubjectPrefix = "rawbench."

// rawRun is rawJetStreamWith with the given consumers. A consumer filtered on the confirmed
// events takes one message per lifecycle, the others three. drain, when set, runs once every
// consumer has taken all its messages and counts in the elapsed time (the raw design floor
// waits there for its relays).
func (pb *paymentsBench) rawRun(b *testing.B, consumers []rawConsumer, rate float64,
	drain func(context.Context) error) (float64, []time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), benchProjectedTimeout)
	defer cancel()
	var cfg jetstream.StreamConfig
	for _, c := range bus.Streams(bus.ProvisionOptions{Replicas: 1, DuplicateWindow: 2 * time.Minute}) {
		if c.Name == "PAYMENTS" {
			cfg = c
		}
	}
	cfg.Name, cfg.Subjects = "BENCH_RAW_"+uuid.NewString()[:8], []string{rawSubjectPrefix + ">"}
	st, err := pb.ops.CreateStream(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = pb.ops.DeleteStream(context.Background(), cfg.Name) }()
	conss := make([]jetstream.Consumer, len(consumers))
	for i, rc := range consumers {
		cc := jetstream.ConsumerConfig{Durable: fmt.Sprintf("raw%d", i), AckPolicy: jetstream.AckExplicitPolicy,
			MaxAckPending: 4000}
		if rc.filter != "" {
			cc.FilterSubject = rawSubjectPrefix + rc.filter
		}
		if conss[i], err = st.CreateOrUpdateConsumer(ctx, cc); err != nil {
			b.Fatal(err)
		}
	}
	consumed := make(chan error, len(consumers))
	lags := make([][]time.Duration, len(consumers))
	b.ResetTimer()
	start := time.Now()
	for i, cons := range conss {
		want := 3 * b.N
		if strings.HasSuffix(consumers[i].filter, ".confirmed") {
			want = b.N
		}
		go func() { consumed <- consumeAll(ctx, cons, want, rate > 0, consumers[i].handle, &lags[i]) }()
	}
	// The operator publishes: the payments publisher may publish only payment.>.
	if _, err := loadgen.Run(ctx, pb.ops, pb.tenants, b.N, loadgen.Options{Inflight: benchInflight, Rate: rate,
		SubjectPrefix: rawSubjectPrefix}); err != nil {
		b.Fatal(err)
	}
	for range conss {
		if err := <-consumed; err != nil {
			b.Fatal(err)
		}
	}
	if drain != nil {
		if err := drain(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var all []time.Duration
	for _, l := range lags {
		all = append(all, l...)
	}
	slices.Sort(all)
	return float64(b.N) / time.Since(start).Seconds(), all
}

// consumeAll fetches and acknowledges n messages, each batch after handle (when set) returned,
// and appends to lags each one's time from its store in the stream to its acknowledgement. It
// fetches as the services do (bus.Fetcher: what the long-lived pull subscription holds,
// completed by what comes within the linger, up to 500), so that its rate and lag are those of
// a consumer that does nothing else.
func consumeAll(ctx context.Context, cons jetstream.Consumer, n int, paced bool,
	handle func(context.Context, []jetstream.Msg) error, lags *[]time.Duration) error {
	f := &bus.Fetcher{Consumer: cons, Max: 500, MaxWait: time.Second}
	defer f.Close()
	for got := 0; got < n; {
		msgs, err := f.Fetch(ctx)
		if err != nil {
			return err
		}
		if handle != nil && len(msgs) > 0 {
			if err := handle(ctx, msgs); err != nil {
				return err
			}
		}
		for _, m := range msgs {
			if err := m.Ack(); err != nil {
				return err
			}
			// Only the paced runs report a lag: at full speed the limit is the throughput, and
			// reading each message's metadata would cost the consumers time of their own.
			if !paced {
				got++
				continue
			}
			if md, err := m.Metadata(); err == nil {
				*lags = append(*lags, time.Since(md.Timestamp))
			}
			got++
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%d of %d consumed: %w", got, n, ctx.Err())
		}
	}
	return nil
}

// runRawPostgres writes, for each lifecycle, the three rows the projections end with (a
// payments row CONFIRMED, a pool DEBIT movement, a merchant ledger PAYMENT entry) with COPY into
// copies of those tables (same columns, defaults, checks and indexes; no foreign key), 500
// lifecycles per transaction from three writers, and reports lifecycles/s. The copies live in
// a schema of their own, dropped afterwards.
func (pb *paymentsBench) runRawPostgres(b *testing.B) {
	ctx := context.Background()
	schema := "bench_raw_" + uuid.NewString()[:8]
	_, err := pb.db.Exec(ctx, fmt.Sprintf(`CREATE SCHEMA %[1]s;
        CREATE TABLE %[1]s.payments (LIKE payments.payments INCLUDING ALL);
        CREATE TABLE %[1]s.movements (LIKE pool.movements INCLUDING ALL);
        CREATE TABLE %[1]s.merchant_ledger (LIKE merchant.merchant_ledger INCLUDING ALL)`, schema))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = pb.db.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`) }()
	batches := rawRows(pb.tenants, b.N, 500)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(batches))
	next := make(chan rawBatch)
	for range 3 {
		wg.Go(func() {
			for batch := range next {
				if err := batch.write(ctx, pb.db, schema); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, batch := range batches {
		next <- batch
	}
	close(next)
	wg.Wait()
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	pb.rawPostgres = float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(pb.rawPostgres, "lifecycles/s")
}

// rawBatch is the rows of some lifecycles for the three tables.
type rawBatch struct {
	payments, movements, ledger [][]any
}

var (
	rawPaymentColumns = []string{"company_id", "environment", "payment_id", "status", "has_created", "merchant_id",
		"merchant_wallet", "customer_wallet", "amount_micros", "tx_hash", "block_explorer_url", "created_at", "expires_at",
		"confirmed_at", "updated_at"}
	rawMovementColumns = []string{"id", "company_id", "environment", "seq", "type", "amount", "balance_before",
		"balance_after", "status", "tx_hash", "description", "payment_id", "payment_amount", "merchant_id", "merchant_name",
		"created_at", "confirmed_at", "key"}
	rawLedgerColumns = []string{"id", "merchant_id", "seq", "type", "amount_micros", "balance_before_micros",
		"balance_after_micros", "payment_id", "tx_hash", "status", "description", "source_key", "created_at"}
)

// rawRows builds the rows of n lifecycles spread over the tenants like loadgen.Run, with the
// pools' and merchants' sequence numbers and balance chains, in batches of per lifecycles.
func rawRows(tenants []loadgen.Tenant, n, per int) []rawBatch {
	poolSeq, poolBal := map[string]int64{}, map[string]int64{}
	ledgerSeq, ledgerBal := map[string]int64{}, map[string]int64{}
	now := time.Now()
	var out []rawBatch
	for i := range n {
		if i%per == 0 {
			out = append(out, rawBatch{})
		}
		t := tenants[i%len(tenants)]
		m := t.Merchants[i%len(t.Merchants)]
		pid := uuid.NewString()
		tx := fmt.Sprintf("0x%064x", i)
		amount := int64(1+i%500)*1_000_000 + int64(i%100)*10_000
		bt := &out[len(out)-1]
		bt.payments = append(bt.payments, paymentRow(t.CompanyID, t.Environment, pid, m.ID, m.Wallet,
			fmt.Sprintf("0x%040x", i+1), tx, "https://basescan.org/tx/"+tx, amount, now))
		poolSeq[t.CompanyID]++
		before := poolBal[t.CompanyID]
		poolBal[t.CompanyID] = before - amount
		bt.movements = append(bt.movements, movementRow(t.CompanyID, t.Environment, pid, m.ID, tx, amount,
			poolSeq[t.CompanyID], before, now))
		ledgerSeq[m.ID]++
		lbefore := ledgerBal[m.ID]
		ledgerBal[m.ID] = lbefore + amount
		bt.ledger = append(bt.ledger, ledgerRow(m.ID, pid, tx, amount, ledgerSeq[m.ID], lbefore, now))
	}
	return out
}

func (r rawBatch) write(ctx context.Context, db *pgxpool.Pool, schema string) error {
	return copyTables(ctx, db, schema, []rawTable{{"payments", rawPaymentColumns, r.payments},
		{"movements", rawMovementColumns, r.movements}, {"merchant_ledger", rawLedgerColumns, r.ledger}})
}

// rawTable is rows to copy into one table of a raw part's schema.
type rawTable struct {
	table string
	cols  []string
	rows  [][]any
}

// copyTables copies the tables' rows (COPY) in one transaction.
func copyTables(ctx context.Context, db *pgxpool.Pool, schema string, tables []rawTable) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error { return copyIn(ctx, tx, schema, tables) })
}

// copyIn copies the tables' rows (COPY) in tx.
func copyIn(ctx context.Context, tx pgx.Tx, schema string, tables []rawTable) error {
	for _, t := range tables {
		if len(t.rows) == 0 {
			continue
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{schema, t.table}, t.cols, pgx.CopyFromRows(t.rows)); err != nil {
			return fmt.Errorf("COPY %s: %w", t.table, err)
		}
	}
	return nil
}

// paymentRow is the payments row (rawPaymentColumns) of a confirmed payment.
func paymentRow(company, env, pid, merchant, merchantWallet, customerWallet, tx, explorer string, amount int64,
	now time.Time) []any {
	return []any{company, env, pid, "CONFIRMED", true, merchant, merchantWallet, customerWallet, amount, tx, explorer,
		now, now.Add(time.Hour), now, now}
}

// movementRow is the pool's DEBIT movement (rawMovementColumns) of a payment, the seq-th of its
// pool, whose balance was before.
func movementRow(company, env, pid, merchant, tx string, amount, seq, before int64, now time.Time) []any {
	return []any{uuid.New(), company, env, seq, "DEBIT", -amount, before, before - amount, "CONFIRMED", tx,
		"Payment " + pid, pid, amount, merchant, "Shop", now, now, "debit:" + pid}
}

// ledgerRow is the merchant ledger's PAYMENT entry (rawLedgerColumns) of a payment, the seq-th of
// its merchant, whose balance was before.
func ledgerRow(merchant, pid, tx string, amount, seq, before int64, now time.Time) []any {
	return []any{uuid.New(), uuid.MustParse(merchant), seq, "PAYMENT", amount, before, before + amount, pid, tx,
		"COMPLETED", "Payment " + pid, "payment:" + pid, now}
}
