package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/services/devstack"
)

// Scenario is what a scripted run (Config.Script) acts on: the cluster under load, and the means
// to record a fault and measure the recovery from it.
type Scenario struct {
	Cluster  *Cluster
	Events   *Events
	JS       jetstream.JetStream
	DB       *pgxpool.Pool
	Receiver *Receiver
	Book     *Book
	Tenants  []Tenant

	partner *Partner
	inj     *Injector
}

// Step applies a fault with do (which returns once the fault is undone), records it, and
// measures the recovery as the random faults do.
func (s *Scenario) Step(ctx context.Context, kind, target string, do func(ctx context.Context) error) (Fault, error) {
	f := Fault{Kind: kind, Target: target, Start: time.Now()}
	if err := do(ctx); err != nil {
		return f, fmt.Errorf("%s %s: %w", kind, target, err)
	}
	f.End = time.Now()
	var err error
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	if f.Recovery, err = s.inj.probe(pctx); err != nil {
		return f, fmt.Errorf("after %s %s the platform did not recover: %w", kind, target, err)
	}
	s.Events.Logf("recovery", target, "a payment published after the %s was fully projected %s later", kind, f.Recovery.Round(time.Millisecond))
	s.inj.record(f)
	return f, nil
}

// Wait lets the load run for d.
func (s *Scenario) Wait(ctx context.Context, d time.Duration) { sleep(ctx, d) }

// streamInfo reads a stream's information, each request bounded: one sent while the cluster
// elects a leader may never be answered.
func (s *Scenario) streamInfo(ctx context.Context, stream string) (*jetstream.StreamInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := s.JS.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	return st.Info(ctx)
}

// StreamLeader returns the index of the NATS node that leads a stream. A request the cluster
// does not answer (a leader election after an earlier kill, a loaded machine) is sent again,
// for up to 30 s.
func (s *Scenario) StreamLeader(ctx context.Context, stream string) (int, error) {
	var info *jetstream.StreamInfo
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if info, err = s.streamInfo(ctx, stream); err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		sleep(ctx, 200*time.Millisecond)
	}
	if err != nil {
		return 0, fmt.Errorf("stream %s information: %w", stream, err)
	}
	if info.Cluster == nil {
		return 0, fmt.Errorf("stream %s has no cluster information", stream)
	}
	for i := range s.Cluster.NATSNodes() {
		if devstack.NATSNodeName(i) == info.Cluster.Leader {
			return i, nil
		}
	}
	return 0, fmt.Errorf("stream %s is led by %q, not a node of the cluster", stream, info.Cluster.Leader)
}

// StreamCurrent reports nil once every replica of a stream is current (caught up with its
// leader), else what lags.
func (s *Scenario) StreamCurrent(ctx context.Context, stream string) error {
	info, err := s.streamInfo(ctx, stream)
	if err != nil {
		return err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return fmt.Errorf("%s has no leader", stream)
	}
	if len(info.Cluster.Replicas) != s.Cluster.NATSNodes()-1 {
		return fmt.Errorf("%s has %d followers", stream, len(info.Cluster.Replicas))
	}
	for _, r := range info.Cluster.Replicas {
		if !r.Current || r.Offline || r.Lag > 0 {
			return fmt.Errorf("%s replica %s: current %v, offline %v, lag %d", stream, r.Name, r.Current, r.Offline, r.Lag)
		}
	}
	return nil
}

// Metric returns the sum of the samples of a Prometheus metric that instance serves whose
// labels include every one of labels ("name=value").
func (s *Scenario) Metric(ctx context.Context, instance, metric string, labels ...string) (float64, error) {
	var in devstack.Instance
	for _, i := range s.Cluster.Instances() {
		if i.Name == instance {
			in = i
		}
	}
	url := s.Cluster.cfg.MetricsURLOf(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.Cluster.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric) || (len(line) > len(metric) && line[len(metric)] != '{' && line[len(metric)] != ' ') {
			continue
		}
		ok := true
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			if !strings.Contains(line, k+`="`+v+`"`) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// Restart stops a service instance as an orchestrator does in a rolling update (SIGTERM,
// SIGKILL after 20 s), starts it again and waits until it is ready.
func (s *Scenario) Restart(ctx context.Context, instance string) error {
	p := s.Cluster.Service(instance)
	p.stop(20 * time.Second)
	s.Events.Logf("rolling-restart", instance, "stopped (SIGTERM); starting again")
	if err := p.start(); err != nil {
		return err
	}
	for _, in := range s.Cluster.Instances() {
		if in.Name == instance {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			return devstack.WaitReady(rctx, s.Cluster.http, []devstack.Target{{Name: in.Name, URL: s.Cluster.cfg.ReadyURLOf(in)}},
				50*time.Millisecond)
		}
	}
	return fmt.Errorf("no instance %s", instance)
}
