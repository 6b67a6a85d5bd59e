package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/e2e/chaos"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/devstack"
)

// clusterRun runs a scripted chaos run on the production shape (3 NATS nodes, streams R3, two
// replicas of every service) and fails the test unless every invariant, standard and scripted,
// holds.
func clusterRun(t *testing.T, cfg chaos.Config) chaos.Report {
	t.Helper()
	bin := t.TempDir()
	if err := chaos.Build(bin); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "payplat-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept the run's directory (every process's log in logs/): %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	cfg.Topology, cfg.Dir, cfg.BinDir = devstack.Cluster, dir, bin
	out := &testkit.Buffer{}
	cfg.Out = out
	rep, err := chaos.Run(context.Background(), cfg)
	if rep.Events != nil {
		rep.Print(out)
	}
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatal("invariants violated (see the report above)")
	}
	return rep
}

// measured collects the durations a scripted run measured, for its checks and report.
type measured struct {
	takeovers, catchUps map[string]time.Duration
	rolling             [2]time.Time
	// recoveries: after each scripted fault, how long a payment published then took to be fully
	// projected.
	recoveries map[string]time.Duration
}

// The production shape under load: work shared by the replicas; the NATS node leading PAYMENTS,
// then the one leading POOL, killed (the others take over, the node catches up after its
// restart); the active relay of merchant and of pool killed (the standby takes over within 5
// s); PostgreSQL stopped in immediate mode and started again (what a failover looks like to the
// services: they reconnect by themselves); every process restarted in turn (SIGTERM, then
// start) with no request failing that a retry with its Idempotency-Key would not absorb. Then
// every invariant of the chaos check.
func TestTheClusterKeepsEveryInvariantThroughFailoversAndARollingRestart(t *testing.T) {
	m := &measured{takeovers: map[string]time.Duration{}, catchUps: map[string]time.Duration{},
		recoveries: map[string]time.Duration{}}
	cfg := chaos.DefaultConfig()
	cfg.Seed, cfg.Duration = 20261126, 10*time.Minute
	cfg.Load.Lifecycles, cfg.Load.HTTP = 100, 10
	cfg.Script = func(ctx context.Context, s *chaos.Scenario) error { return clusterScript(ctx, s, m) }
	cfg.Checks = func(ctx context.Context, s *chaos.Scenario) []chaos.Result { return clusterChecks(ctx, s, m) }
	clusterRun(t, cfg)
}

func clusterScript(ctx context.Context, s *chaos.Scenario, m *measured) error {
	s.Wait(ctx, 10*time.Second)
	for _, stream := range []string{"PAYMENTS", "POOL"} {
		if err := killStreamLeader(ctx, s, stream, m); err != nil {
			return err
		}
		s.Wait(ctx, 3*time.Second)
	}
	for _, service := range []string{"merchant", "pool"} {
		if err := killActiveRelay(ctx, s, service, m); err != nil {
			return err
		}
		s.Wait(ctx, 3*time.Second)
	}
	// What a CloudNativePG failover looks like to the services: every connection to the primary
	// cut at once, the database back a moment later (here the same server after crash recovery;
	// there a promoted replica behind the same payplat-pg-rw Service). Nothing is done by hand:
	// the services reconnect by themselves.
	f, err := s.Step(ctx, chaos.FaultPostgres, "postgres", func(ctx context.Context) error {
		if err := s.Cluster.StopPostgresImmediately(); err != nil {
			return err
		}
		s.Wait(ctx, 2*time.Second)
		return s.Cluster.StartPostgres(ctx)
	})
	if err != nil {
		return err
	}
	m.recoveries["PostgreSQL stopped (immediate) and started 2 s later"] = f.Recovery
	s.Wait(ctx, 3*time.Second)
	m.rolling[0] = time.Now()
	for _, in := range s.Cluster.Instances() {
		_, err := s.Step(ctx, "rolling-restart", in.Name, func(ctx context.Context) error {
			return s.Restart(ctx, in.Name)
		})
		if err != nil {
			return err
		}
	}
	m.rolling[1] = time.Now()
	s.Wait(ctx, 5*time.Second)
	return nil
}

// killStreamLeader kills the NATS node leading stream, restarts it after 2 s and measures how
// long its replica of the stream takes to be current again.
func killStreamLeader(ctx context.Context, s *chaos.Scenario, stream string, m *measured) error {
	leader, err := s.StreamLeader(ctx, stream)
	if err != nil {
		return err
	}
	node := devstack.NATSNodeName(leader)
	f, err := s.Step(ctx, "nats-leader-kill-9", node+" ("+stream+")", func(ctx context.Context) error {
		s.Cluster.NATSNode(leader).Kill()
		s.Events.Logf("nats-leader-kill-9", node, "killed: it led %s; restarting in 2s", stream)
		s.Wait(ctx, 2*time.Second)
		return s.Cluster.NATSNode(leader).Start()
	})
	if err != nil {
		return err
	}
	m.recoveries["kill -9 of the NATS node leading "+stream] = f.Recovery
	start := time.Now()
	for {
		err := s.StreamCurrent(ctx, stream)
		if err == nil {
			m.catchUps[stream] = time.Since(start)
			s.Events.Logf("recovery", node, "every replica of %s current %s after the restart", stream, m.catchUps[stream].Round(time.Millisecond))
			return nil
		}
		if time.Since(start) > 2*time.Minute {
			return fmt.Errorf("%s not current 2 minutes after %s restarted: %w", stream, node, err)
		}
		s.Wait(ctx, 100*time.Millisecond)
	}
}

// killActiveRelay kills (SIGKILL) the replica of service whose relay is active and measures how
// long the other replica's relay takes to become active.
func killActiveRelay(ctx context.Context, s *chaos.Scenario, service string, m *measured) error {
	leader, err := relayLeader(ctx, s, service, "")
	if err != nil {
		return err
	}
	var took time.Duration
	_, err = s.Step(ctx, "relay-leader-kill-9", leader, func(ctx context.Context) error {
		s.Cluster.Service(leader).Kill()
		killed := time.Now()
		next, err := relayLeader(ctx, s, service, leader)
		if err != nil {
			return err
		}
		took = time.Since(killed)
		s.Events.Logf("relay-leader-kill-9", leader, "%s's relay active %s after the kill", next, took.Round(time.Millisecond))
		return s.Cluster.Service(leader).Start()
	})
	m.takeovers[service] = took
	return err
}

// relayLeader waits up to 30 s for a replica of service other than except whose relay reports
// itself active (relay_is_leader 1), and returns its name.
func relayLeader(ctx context.Context, s *chaos.Scenario, service, except string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, name := range s.Cluster.ReplicasOf(service) {
			if name == except {
				continue
			}
			if v, err := s.Metric(ctx, name, "relay_is_leader"); err == nil && v == 1 {
				return name, nil
			}
		}
		s.Wait(ctx, 20*time.Millisecond)
	}
	return "", errors.New("no relay of " + service + " became active within 30s")
}

// relayTakeoverBound is the target of the relay's failover (issue 15).
const relayTakeoverBound = 5 * time.Second

func clusterChecks(ctx context.Context, s *chaos.Scenario, m *measured) []chaos.Result {
	shares := chaos.Result{Name: "cluster: each replica applied a real share of each shared consumer's work"}
	var counts []string
	for _, c := range []struct{ service, consumer string }{
		{"payment-projection", "payment-projection"}, {"pool", "pool-payments"}, {"merchant", "merchant-ledger-payments"},
	} {
		var per []float64
		var total float64
		for _, name := range s.Cluster.ReplicasOf(c.service) {
			v, err := s.Metric(ctx, name, "bus_consumer_messages_total", "consumer="+c.consumer, "outcome=acked")
			if err != nil {
				shares.Violations = append(shares.Violations, err.Error())
			}
			per, total = append(per, v), total+v
		}
		for i, v := range per {
			if total == 0 || v < 0.1*total {
				shares.Violations = append(shares.Violations, fmt.Sprintf("%s replica %d acknowledged %.0f of %.0f messages", c.consumer, i+1, v, total))
			}
		}
		counts = append(counts, fmt.Sprintf("%s %v", c.consumer, per))
	}
	// The webhook dispatchers share the partitions of their events stream (whichever companies
	// hash to them): each must have taken some.
	var hooks []float64
	for _, name := range s.Cluster.ReplicasOf("webhook-dispatcher") {
		v, err := s.Metric(ctx, name, "bus_consumer_messages_total", "outcome=acked")
		if err != nil || v == 0 {
			shares.Violations = append(shares.Violations, fmt.Sprintf("%s took no share of the webhook events (%v)", name, err))
		}
		hooks = append(hooks, v)
	}
	counts = append(counts, fmt.Sprintf("webhook partitions %v", hooks))
	shares.Counts = strings.Join(counts, ", ") + " (messages acknowledged per replica since its last start)"

	failover := chaos.Result{Name: fmt.Sprintf("cluster: relays take over within %s, stream replicas catch up", relayTakeoverBound)}
	var lines []string
	for _, k := range sortedKeys(m.takeovers) {
		if m.takeovers[k] > relayTakeoverBound || m.takeovers[k] == 0 {
			failover.Violations = append(failover.Violations, fmt.Sprintf("%s relay took over after %s", k, m.takeovers[k]))
		}
		lines = append(lines, fmt.Sprintf("%s relay %s", k, m.takeovers[k].Round(time.Millisecond)))
	}
	for _, k := range sortedKeys(m.catchUps) {
		lines = append(lines, fmt.Sprintf("%s current after %s", k, m.catchUps[k].Round(time.Millisecond)))
	}
	for _, k := range sortedKeys(m.recoveries) {
		lines = append(lines, fmt.Sprintf("after %s: a new payment fully projected in %s", k, m.recoveries[k].Round(time.Millisecond)))
	}
	failover.Counts = strings.Join(lines, ", ")

	// The rule: no 5xx other than ones a client retry with Idempotency-Key absorbs. A 503
	// (a service restarting, a command that did not finish in time) and a cut connection are
	// such answers: nothing was done, or what was done is found again by the key. Requests with
	// a key must all have resolved (the HTTP invariant checks it); requests without one may
	// have got those answers, and are counted. Any other 5xx (500: a defect) is a violation.
	rolling := chaos.Result{Name: "cluster: a rolling restart fails no request a retry with its Idempotency-Key would not absorb"}
	_, _, _, ops := s.Book.Snapshot()
	during, unkeyed := 0, map[string]int{}
	for _, o := range ops {
		if o.At.Before(m.rolling[0]) || o.At.After(m.rolling[1]) {
			continue
		}
		during++
		switch {
		case o.Status >= 500 && o.Status != http.StatusServiceUnavailable:
			rolling.Violations = append(rolling.Violations, fmt.Sprintf("%s %s at %s (Idempotency-Key %q): %d %s", o.Kind, o.Target,
				o.At.Format(time.RFC3339Nano), o.IdemKey, o.Status, o.Code))
		case o.IdemKey == "" && o.Status == 0:
			unkeyed["cut connection"]++
		case o.IdemKey == "" && o.Status == http.StatusServiceUnavailable:
			unkeyed["503 "+o.Code]++
		}
	}
	rolling.Counts = fmt.Sprintf("%d requests during the rolling restart of %d processes (%s); without an Idempotency-Key, answered with what a keyed retry absorbs: %v",
		during, len(s.Cluster.Instances()), m.rolling[1].Sub(m.rolling[0]).Round(time.Second), unkeyed)
	return []chaos.Result{shares, failover, rolling}
}

func sortedKeys(m map[string]time.Duration) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
