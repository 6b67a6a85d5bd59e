package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/payplat/platform/services/devstack"
)

// The kinds of fault the run injects.
const (
	FaultKill          = "kill-9"        // a service killed with SIGKILL, restarted after 0-5 s
	FaultFreeze        = "sigstop"       // a service frozen with SIGSTOP for 2-15 s, then SIGCONT
	FaultNATS          = "nats-kill-9"   // the NATS server killed with SIGKILL, restarted after 0-3 s
	FaultPostgres      = "pg-immediate"  // PostgreSQL stopped in immediate mode, restarted after 0-3 s
	FaultReceiverDown  = "receiver-down" // the webhook receiver's port closed for 30 s (once)
	FaultPoison        = "poison"        // bad messages on every inbound subject
	receiverDownPeriod = 30 * time.Second
)

// FaultKinds lists every kind, in the order the report shows them.
var FaultKinds = []string{FaultKill, FaultFreeze, FaultNATS, FaultPostgres, FaultReceiverDown, FaultPoison}

// Fault is one injected fault: what, on what, when it began and ended, and how long the
// platform took afterwards to project a new payment fully (Recovery; 0 when not measured).
type Fault struct {
	Kind     string
	Target   string
	Start    time.Time
	End      time.Time
	Recovery time.Duration
}

// Injector injects faults into a cluster for a bounded time.
type Injector struct {
	cluster  *Cluster
	receiver *Receiver
	load     *Load
	pub      *Publisher
	probe    func(ctx context.Context) (time.Duration, error)
	rnd      *rng
	events   *Events
	tenants  []Tenant

	mu     sync.Mutex
	faults []Fault
	poison []Poison
}

// Faults returns the faults injected so far.
func (in *Injector) Faults() []Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Fault(nil), in.faults...)
}

// Poison returns the poison messages published so far.
func (in *Injector) Poison() []Poison {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Poison(nil), in.poison...)
}

func (in *Injector) record(f Fault, ps ...Poison) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.faults = append(in.faults, f)
	in.poison = append(in.poison, ps...)
}

// plan returns the first faults of the run, so that even a short one covers every kind: one of
// each kind (the receiver's downtime second, so that its retries fall due within the run), in an
// order fixed by the seed, then a kill of each service not killed yet.
func (in *Injector) plan() []struct{ kind, target string } {
	type step = struct{ kind, target string }
	killed := in.randomService()
	first := []step{{FaultKill, killed}, {FaultFreeze, in.randomService()}, {FaultNATS, "nats"},
		{FaultPostgres, "postgres"}, {FaultPoison, "bus"}}
	for i := len(first) - 1; i > 0; i-- {
		j := in.rnd.intN(i + 1)
		first[i], first[j] = first[j], first[i]
	}
	out := slices.Insert(first, 1, step{FaultReceiverDown, "receiver"})
	for _, s := range devstack.Services {
		if s != killed {
			out = append(out, step{FaultKill, s})
		}
	}
	return out
}

func (in *Injector) randomService() string {
	return devstack.Services[in.rnd.intN(len(devstack.Services))]
}

// next picks a fault after the planned ones: kills most often, then freezes, then the rest.
func (in *Injector) next() (string, string) {
	switch r := in.rnd.float(); {
	case r < 0.4:
		return FaultKill, in.randomService()
	case r < 0.7:
		return FaultFreeze, in.randomService()
	case r < 0.8:
		return FaultNATS, "nats"
	case r < 0.9:
		return FaultPostgres, "postgres"
	default:
		return FaultPoison, "bus"
	}
}

// Run injects faults until ctx ends, one after another with 2-6 s between them (the receiver's
// downtime runs beside the others).
func (in *Injector) Run(ctx context.Context) error {
	plan := in.plan()
	background := make(chan error, 1)
	for i := 0; ctx.Err() == nil; i++ {
		kind, target := "", ""
		if i < len(plan) {
			kind, target = plan[i].kind, plan[i].target
		} else {
			kind, target = in.next()
		}
		if kind == FaultReceiverDown {
			go func() { background <- in.receiverDown(ctx) }()
		} else if err := in.inject(ctx, kind, target); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(in.rnd.duration(2*time.Second, 6*time.Second)):
		}
	}
	select {
	case err := <-background:
		return err
	case <-time.After(receiverDownPeriod + 5*time.Second):
		return nil
	}
}

// inject applies one fault, undoes it, and measures the recovery.
func (in *Injector) inject(ctx context.Context, kind, target string) error {
	f := Fault{Kind: kind, Target: target, Start: time.Now()}
	var err error
	switch kind {
	case FaultKill:
		target = in.instanceOf(target)
		p := in.cluster.Service(target)
		p.kill()
		delay := in.rnd.duration(0, 5*time.Second)
		in.events.Logf(kind, target, "killed (pid gone); restarting in %s", delay.Round(time.Millisecond))
		sleep(ctx, delay)
		err = p.start()
	case FaultFreeze:
		target = in.instanceOf(target)
		p := in.cluster.Service(target)
		d := in.rnd.duration(2*time.Second, 15*time.Second)
		if err = p.pause(); err == nil {
			in.events.Logf(kind, target, "frozen (SIGSTOP) for %s", d.Round(time.Millisecond))
			sleep(ctx, d)
			err = p.resume()
		}
	case FaultNATS:
		node := in.rnd.intN(in.cluster.NATSNodes())
		target = devstack.NATSNodeName(node)
		in.cluster.NATSNode(node).kill()
		delay := in.rnd.duration(0, 3*time.Second)
		in.events.Logf(kind, target, "killed; restarting in %s", delay.Round(time.Millisecond))
		sleep(ctx, delay)
		err = in.cluster.NATSNode(node).start()
	case FaultPostgres:
		if err = in.cluster.StopPostgresImmediately(); err == nil {
			delay := in.rnd.duration(0, 3*time.Second)
			in.events.Logf(kind, target, "stopped in immediate mode; restarting in %s", delay.Round(time.Millisecond))
			sleep(ctx, delay)
			err = in.cluster.StartPostgres(context.WithoutCancel(ctx))
		}
	case FaultPoison:
		var ps []Poison
		ps, err = InjectPoison(context.WithoutCancel(ctx), in.pub, in.load, in.tenants[0], in.tenants[len(in.tenants)-1])
		in.record(Fault{Kind: kind, Target: target, Start: f.Start, End: time.Now()}, ps...)
		in.events.Logf(kind, target, "%d poison messages published on the inbound subjects", len(ps))
		return err
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, target, err)
	}
	f.End = time.Now()
	if in.probe != nil {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		f.Recovery, err = in.probe(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("after %s %s the platform did not recover: %w", kind, target, err)
		}
		in.events.Logf("recovery", target, "a payment published after the %s was fully projected %s later", kind,
			f.Recovery.Round(time.Millisecond))
	}
	in.record(f)
	return nil
}

func (in *Injector) receiverDown(ctx context.Context) error {
	f := Fault{Kind: FaultReceiverDown, Target: "receiver", Start: time.Now()}
	in.events.Logf(FaultReceiverDown, "receiver", "port closed for %s", receiverDownPeriod)
	if err := in.receiver.Down(context.WithoutCancel(ctx), receiverDownPeriod); err != nil {
		return err
	}
	f.End = time.Now()
	in.events.Logf(FaultReceiverDown, "receiver", "listening again")
	in.record(f)
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// instanceOf picks one replica of a service.
func (in *Injector) instanceOf(service string) string {
	replicas := in.cluster.ReplicasOf(service)
	return replicas[in.rnd.intN(len(replicas))]
}
