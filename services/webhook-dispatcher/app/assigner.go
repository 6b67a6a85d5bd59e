package app

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// PartitionRepository keeps the leases on the partitions (implemented by adapters.Partitions).
type PartitionRepository interface {
	Heartbeat(ctx context.Context, member string, ttl time.Duration) (int, error)
	Renew(ctx context.Context, member string, ttl time.Duration) ([]int, error)
	Claim(ctx context.Context, member string, n int, ttl time.Duration) ([]int, error)
	Release(ctx context.Context, member string, partition int) error
	Leave(ctx context.Context, member string) error
}

// AssignerConfig tunes an Assigner.
type AssignerConfig struct {
	Partitions int
	// LeaseTTL is how long a lease (and a membership) lasts without renewal (default 10 s): how
	// long the partitions of a dispatcher that died or froze wait before others take them.
	LeaseTTL time.Duration
	// Tick is how often leases are renewed and the share rebalanced (default 1 s).
	Tick time.Duration
	// Consume consumes partition p until ctx ends. held tells, before each batch, whether the
	// lease still holds (a dispatcher frozen past its lease must not apply a batch it fetched).
	Consume func(ctx context.Context, p int, held func() bool)
	// Drain waits until what was taken from partition p is done (its first attempts made).
	Drain func(ctx context.Context, p int) error
}

// Assigner shares the partitions among the live dispatchers: each takes its share,
// ceil(partitions / live), of the partitions nobody holds, consumes each one it holds, and gives
// back what exceeds its share when more dispatchers come, after draining it, so that a company's
// events keep their order across the handover.
type Assigner struct {
	store  PartitionRepository
	member string
	cfg    AssignerConfig
	log    *slog.Logger

	mu      sync.Mutex
	running map[int]*partitionRun
	renewed time.Time // last successful renewal
}

type partitionRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewAssigner returns the Assigner of member.
func NewAssigner(store PartitionRepository, member string, cfg AssignerConfig, log *slog.Logger) *Assigner {
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 10 * time.Second
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	return &Assigner{store: store, member: member, cfg: cfg, log: log.With("member", member), running: map[int]*partitionRun{}}
}

// Run takes and gives back partitions until ctx ends, then stops consuming, drains and leaves.
func (a *Assigner) Run(ctx context.Context) error {
	t := time.NewTicker(a.cfg.Tick)
	defer t.Stop()
	for {
		a.step(ctx)
		select {
		case <-ctx.Done():
			a.leave(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		}
	}
}

// Owned returns the partitions this dispatcher consumes, sorted.
func (a *Assigner) Owned() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]int, 0, len(a.running))
	for p := range a.running {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (a *Assigner) step(ctx context.Context) {
	live, err := a.store.Heartbeat(ctx, a.member, a.cfg.LeaseTTL)
	if err == nil {
		var owned []int
		if owned, err = a.store.Renew(ctx, a.member, a.cfg.LeaseTTL); err == nil {
			a.mu.Lock()
			a.renewed = time.Now()
			a.mu.Unlock()
			a.rebalance(ctx, owned, live)
			return
		}
	}
	if ctx.Err() != nil {
		return
	}
	a.log.Warn("renewing partition leases failed", "err", err)
	if !a.held() {
		// The leases may have passed to others meanwhile: stop before two consume a partition.
		for _, p := range a.Owned() {
			a.stop(p)
		}
	}
}

// held tells whether the leases renewed last are still valid, with a margin for the clocks'
// rates: the time since the renewal is measured on this process's monotonic clock.
func (a *Assigner) held() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.renewed.IsZero() && time.Since(a.renewed) < a.cfg.LeaseTTL*3/4
}

func (a *Assigner) rebalance(ctx context.Context, owned []int, live int) {
	for _, p := range a.Owned() {
		if !slices.Contains(owned, p) {
			a.log.Warn("partition lease lost; stopping its consumer", "partition", p)
			a.stop(p)
		}
	}
	share := (a.cfg.Partitions + max(live, 1) - 1) / max(live, 1)
	slices.Sort(owned)
	for len(owned) > share {
		p := owned[len(owned)-1]
		owned = owned[:len(owned)-1]
		a.giveBack(ctx, p)
	}
	if len(owned) < share {
		claimed, err := a.store.Claim(ctx, a.member, share-len(owned), a.cfg.LeaseTTL)
		if err != nil {
			a.log.Warn("claiming partitions failed", "err", err)
		}
		owned = append(owned, claimed...)
	}
	for _, p := range owned {
		a.start(ctx, p)
	}
}

// giveBack stops consuming p, waits (a bounded time) until its first attempts are made, and
// releases its lease.
func (a *Assigner) giveBack(ctx context.Context, p int) {
	a.stop(p)
	dctx, cancel := context.WithTimeout(ctx, a.cfg.LeaseTTL/2)
	defer cancel()
	if err := a.cfg.Drain(dctx, p); err != nil {
		a.log.Warn("partition given back before its first attempts were all made", "partition", p, "err", err)
	}
	if err := a.store.Release(ctx, a.member, p); err != nil {
		a.log.Warn("releasing partition failed; it is freed when its lease ends", "partition", p, "err", err)
		return
	}
	a.log.Info("partition given back", "partition", p)
}

func (a *Assigner) start(ctx context.Context, p int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.running[p]; ok {
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	r := &partitionRun{cancel: cancel, done: make(chan struct{})}
	a.running[p] = r
	a.log.Info("partition taken", "partition", p)
	go func() {
		defer close(r.done)
		a.cfg.Consume(cctx, p, a.held)
	}()
}

func (a *Assigner) stop(p int) {
	a.mu.Lock()
	r, ok := a.running[p]
	delete(a.running, p)
	a.mu.Unlock()
	if ok {
		r.cancel()
		<-r.done
	}
}

// leave stops every consumer, drains and gives every partition back at once (a restart or a
// scale-down hands its partitions over without waiting for their leases to end).
func (a *Assigner) leave(ctx context.Context) {
	owned := a.Owned()
	for _, p := range owned {
		a.stop(p)
	}
	dctx, cancel := context.WithTimeout(ctx, a.cfg.LeaseTTL/2)
	defer cancel()
	for _, p := range owned {
		_ = a.cfg.Drain(dctx, p)
	}
	if err := a.store.Leave(ctx, a.member); err != nil {
		a.log.Warn("leaving the dispatchers failed; the partitions are freed when their leases end", "err", err)
	}
}
