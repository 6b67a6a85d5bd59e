package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/services/devstack"
)

// Config configures a run.
type Config struct {
	Duration time.Duration // how long faults are injected (CHAOS_DURATION)
	Seed     uint64        // fixes the faults, their targets and timings, and the load's choices (CHAOS_SEED)
	Load     LoadOptions
	// Companies, each with Merchants merchants; the first WithWebhooks have a webhook endpoint.
	Companies, Merchants, WithWebhooks int
	// Topology is the shape of the platform (devstack.Single when zero).
	Topology devstack.Topology
	// ReceiverErrors and ReceiverTimeouts are the shares of webhook attempts the receiver answers
	// 500 to and lets time out.
	ReceiverErrors, ReceiverTimeouts float64
	// Script, when set, replaces the random faults: it runs under load, and the load stops when
	// it returns (or after Duration). Checks adds invariants of its own, run after the standard
	// ones.
	Script func(ctx context.Context, s *Scenario) error
	Checks func(ctx context.Context, s *Scenario) []Result
	// ServiceEnv is added to the services' environment (after the run's own tuning).
	ServiceEnv   []string
	Dir          string        // state and logs of the run's processes
	BinDir       string        // Programs
	QuietTimeout time.Duration // how long the platform may take to quiet down after the faults
	Out          io.Writer
}

// DefaultConfig is `make chaos` without settings: 5 minutes at 300 lifecycles a second.
func DefaultConfig() Config {
	return Config{Duration: 5 * time.Minute, Seed: uint64(time.Now().UnixNano()),
		Load:      LoadOptions{Lifecycles: 300, HTTP: 20, Treasury: 4, Wallet: 4, Catalogue: 2},
		Companies: 8, Merchants: 6, WithWebhooks: 2, QuietTimeout: 10 * time.Minute, Out: os.Stdout,
		ReceiverErrors: 0.20, ReceiverTimeouts: 0.05}
}

// serviceEnv tunes the services for a run measured in minutes: webhook retries seconds apart
// (the spec's schedule is hours), a short receiver timeout, stranded first attempts taken up
// again quickly, and enough attempts in flight per endpoint that a receiver which lets 5% of
// them time out keeps up with ~100 events a second (in order, one at a time, it would take 2 s
// every 20 events).
var serviceEnv = []string{
	"WEBHOOK_RETRY_SCHEDULE=2s,5s,10s,20s,40s",
	"WEBHOOK_TIMEOUT=2s", // dispatcherTimeout in receiver.go
	"WEBHOOK_RECOVERY_INTERVAL=2s",
	"WEBHOOK_ENDPOINT_CONCURRENCY=32",
	"SHUTDOWN_TIMEOUT=5s",
}

// Report is the outcome of a run.
type Report struct {
	Seed       uint64
	Duration   time.Duration
	Faults     []Fault
	Results    []Result
	Crashes    map[string]int
	Lifecycles int64
	Behind     int64
	Requests   int
	// ClientErrors counts, per fault kind, the partner requests sent while such a fault lasted
	// (until its recovery) that got a 5xx or no answer at their first try.
	ClientErrors map[string]int
	Events       *Events
}

// OK tells whether every invariant held.
func (r Report) OK() bool {
	for _, res := range r.Results {
		if !res.OK() {
			return false
		}
	}
	return len(r.Results) > 0
}

// Run starts the platform, loads it while injecting faults for cfg.Duration, waits for it to
// quiet down and checks the invariants. An error means the run itself could not be carried out
// (or the platform never quieted down); violations are in the Report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := freshDir(cfg.Dir); err != nil {
		return Report{}, err
	}
	ev := NewEvents(cfg.Out)
	rep := Report{Seed: cfg.Seed, Duration: cfg.Duration, Events: ev}
	ev.Logf("phase", "start", "%s: seed %d, %s of faults, %.0f lifecycles/s, %.0f requests/s, state in %s",
		time.Now().UTC().Format(time.RFC3339), cfg.Seed, cfg.Duration, cfg.Load.Lifecycles, cfg.Load.HTTP, cfg.Dir)
	receiver, err := NewReceiver(cfg.Seed, cfg.ReceiverErrors, cfg.ReceiverTimeouts, 3*time.Second)
	if err != nil {
		return rep, err
	}
	defer receiver.Close()
	cluster, err := StartCluster(ctx, ClusterOptions{Dir: cfg.Dir, BinDir: cfg.BinDir, Topology: cfg.Topology,
		ServiceEnv: append(append([]string{}, serviceEnv...), cfg.ServiceEnv...)}, ev)
	if err != nil {
		return rep, err
	}
	defer cluster.Close()
	ev.Logf("phase", "start", "platform ready: gateway %s, NATS %s", cluster.GatewayURLs(), cluster.NATSURL())
	db, err := pgxpool.New(ctx, cluster.DatabaseURL())
	if err != nil {
		return rep, err
	}
	defer db.Close()
	pub, err := NewPublisher(cluster.NATSURL(), cluster.NATSClient("chaos-load"))
	if err != nil {
		return rep, err
	}
	defer pub.Close()
	partner, err := newPartner(cluster.GatewayURLs()...)
	if err != nil {
		return rep, err
	}
	tenants, err := setupTenants(ctx, partner, cluster.AdminToken(), cfg.Companies, cfg.Merchants, cfg.WithWebhooks, receiver)
	if err != nil {
		return rep, fmt.Errorf("setting up the companies: %w", err)
	}
	book := newBook()
	load := NewLoad(cfg.Load, tenants, pub, partner, book, cfg.Seed, ev)
	if err := fundTenants(ctx, load, book, tenants); err != nil {
		return rep, err
	}
	ev.Logf("phase", "load", "%d companies, %d merchants each, %d with webhooks; load and faults start", len(tenants), cfg.Merchants, cfg.WithWebhooks)
	// The cron endpoint runs at most 20 retries a call (SPEC §8), and a call lasts as long as its
	// slowest attempt (a receiver that times out): a dozen callers keep up with the run's retries.
	stopCron := cronCaller(ctx, partner, cluster.CronSecret(), 12, 250*time.Millisecond)
	defer stopCron()

	faultCtx, stopFaults := context.WithTimeout(ctx, cfg.Duration)
	defer stopFaults()
	drainCtx, stopDrain := context.WithTimeout(ctx, cfg.Duration+cfg.QuietTimeout)
	defer stopDrain()
	loaded := make(chan struct{})
	go func() { load.Run(faultCtx, drainCtx); close(loaded) }()
	in := &Injector{cluster: cluster, receiver: receiver, load: load, pub: pub, rnd: newRNG(cfg.Seed, 2), events: ev,
		tenants: tenants, probe: prober{load: load, db: db}.probe}
	nc, err := connect(cluster.NATSURL(), cluster.NATSClient("chaos-check"))
	if err != nil {
		return rep, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return rep, err
	}
	sc := &Scenario{Cluster: cluster, Events: ev, JS: js, DB: db, Receiver: receiver, Book: book, Tenants: tenants,
		partner: partner, inj: in}
	var injErr error
	if cfg.Script != nil {
		injErr = cfg.Script(faultCtx, sc)
		stopFaults()
	} else {
		injErr = in.Run(faultCtx)
	}
	rep.Faults = in.Faults()
	if injErr != nil {
		ev.Logf("phase", "faults", "fault injection failed: %v", injErr)
	}
	ev.Logf("phase", "quiesce", "faults over; bringing everything back and draining the load")
	if err := cluster.EnsureUp(ctx); err != nil {
		return rep, fmt.Errorf("bringing the platform back: %w", err)
	}
	<-loaded
	rep.Lifecycles, rep.Behind = load.published.Load(), load.behind.Load()
	_, _, _, ops := book.Snapshot()
	rep.Requests = len(ops)
	rep.ClientErrors = clientErrors(rep.Faults, ops)
	if err := waitQuiet(ctx, db, js, cfg.QuietTimeout, ev); err != nil {
		return rep, err
	}
	stopCron()
	ev.Logf("phase", "check", "quiet; checking the invariants")
	checker := &Checker{db: db, js: js, tenants: tenants, book: book, receiver: receiver, faults: rep.Faults,
		poison: in.Poison(), ctl: ctlRunner(cfg.BinDir, cluster), logs: cluster.ServiceLogs()}
	check(ctx, cfg, sc, checker, injErr, &rep)
	return rep, nil
}

// fundTenants deposits a large amount in every tenant's pool before the load starts, so that
// payments are never refused for want of treasury.
func fundTenants(ctx context.Context, load *Load, book *Book, tenants []Tenant) error {
	for i := range tenants {
		op := TreasuryOp{Tenant: i, Kind: "deposit", Micros: 1_000_000_000_000}
		var err error
		if op.Key, err = load.fund(ctx, tenants[i], op.Micros); err != nil {
			return err
		}
		op.Acked = true
		book.addTreasury(op)
	}
	return nil
}

// check fills rep with the invariants' results, the scenario's own checks, the API contract's
// and the crashes of the run.
func check(ctx context.Context, cfg Config, sc *Scenario, checker *Checker, injErr error, rep *Report) {
	rep.Results = checker.Check(ctx)
	if cfg.Checks != nil {
		rep.Results = append(rep.Results, cfg.Checks(ctx, sc)...)
	}
	rep.Results = append(rep.Results, sc.partner.contract.result(rep.Requests))
	rep.Crashes = sc.Cluster.Crashes()
	if injErr != nil {
		rep.Results = append(rep.Results, Result{Name: "fault injection", Violations: []string{injErr.Error()}})
	}
}

// runMarker marks a directory as a chaos run's own: a later run may empty it.
const runMarker = ".chaos-run"

// freshDir makes dir an empty directory for the run (PostgreSQL, run as user postgres when the
// run is root's, must be able to enter it). It empties a directory an earlier run left (a second
// run with the same seed would find that run's streams and rows), and refuses any other that
// is not empty.
func freshDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, runMarker)); err != nil {
			return fmt.Errorf("%s is not empty and not the directory of an earlier chaos run: choose another CHAOS_DIR", dir)
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, runMarker), nil, 0o644)
}

// clientErrors counts the requests that failed (5xx, no answer) during each kind of fault. A
// request with an Idempotency-Key that its retries resolved counts too: its first try failed.
func clientErrors(faults []Fault, ops []HTTPOp) map[string]int {
	out := map[string]int{}
	for _, o := range ops {
		if !o.Ambiguous() && o.Attempts <= 1 {
			continue
		}
		for _, f := range faults {
			if !o.At.Before(f.Start) && !o.At.After(f.End.Add(f.Recovery)) {
				out[f.Kind]++
				break
			}
		}
	}
	return out
}

// ctlRunner runs payplat-ctl against the cluster.
func ctlRunner(binDir string, c *Cluster) func(ctx context.Context, args ...string) ([]byte, error) {
	return func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "payplat-ctl"), args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+c.DatabaseURL(), "NATS_URL="+c.NATSURL(), "NATS_CREDS="+c.NATSCreds())
		return cmd.Output()
	}
}

// Print writes the report: one line per fault kind, one per invariant with its counts, and every
// violation.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "\nchaos run: seed %d, %s of faults, %d lifecycles published (%d could not start on time), %d HTTP requests\n",
		r.Seed, r.Duration, r.Lifecycles, r.Behind, r.Requests)
	byKind := map[string][]time.Duration{}
	for _, f := range r.Faults {
		byKind[f.Kind] = append(byKind[f.Kind], f.Recovery)
	}
	kinds := append([]string{}, FaultKinds...)
	for _, f := range r.Faults {
		if !slices.Contains(kinds, f.Kind) {
			kinds = append(kinds, f.Kind)
		}
	}
	for _, k := range kinds {
		ds := byKind[k]
		if len(ds) == 0 && !slices.Contains(FaultKinds, k) {
			continue
		}
		fmt.Fprintf(w, "  faults %-19s %3d  recovery p50 %s p99 %s, failed requests meanwhile %d\n", k, len(ds),
			percentile(ds, 0.5), percentile(ds, 0.99), r.ClientErrors[k])
	}
	var crashed []string
	for name, n := range r.Crashes {
		if n > 0 {
			crashed = append(crashed, fmt.Sprintf("%s %d", name, n))
		}
	}
	sort.Strings(crashed)
	fmt.Fprintf(w, "  exits not injected (restarted): %s\n", strings.Join(append(crashed, "none")[:max(len(crashed), 1)], ", "))
	for _, res := range r.Results {
		mark := "ok  "
		if !res.OK() {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, res.Name, res.Counts)
		for i, v := range res.Violations {
			if i == 50 {
				fmt.Fprintf(w, "       … %d more\n", len(res.Violations)-50)
				break
			}
			fmt.Fprintf(w, "       %s\n", v)
		}
	}
}

func percentile(ds []time.Duration, p float64) string {
	var xs []time.Duration
	for _, d := range ds {
		if d > 0 {
			xs = append(xs, d)
		}
	}
	if len(xs) == 0 {
		return "-"
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	return xs[min(len(xs)-1, int(p*float64(len(xs))))].Round(time.Millisecond).String()
}
