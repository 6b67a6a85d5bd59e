package app

import (
	"context"
	"time"
)

// pruneBatch bounds the deliveries one statement deletes: each batch is a short transaction
// holding few row locks, so pruning a large backlog never stalls the attempts being recorded.
const pruneBatch = 500

// Prune deletes the deliveries delivered more than retention ago, at once and then every
// interval until ctx ends. The delivery log would otherwise grow forever. Failed deliveries
// are kept: a manual retry of one remains possible at any time (SPEC 6.3).
func (d *Dispatcher) Prune(ctx context.Context, retention, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := d.PruneOnce(ctx, retention)
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Warn("pruning delivered deliveries", "pruned", n, "err", err)
		case n > 0:
			d.log.Info("pruned delivered deliveries", "count", n, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// PruneOnce deletes, batch after batch, every delivery delivered more than retention ago, and
// returns how many it deleted.
func (d *Dispatcher) PruneOnce(ctx context.Context, retention time.Duration) (int, error) {
	total := 0
	for ctx.Err() == nil {
		n, err := d.store.PruneDelivered(ctx, retention, pruneBatch)
		total += n
		d.metrics.pruned.Add(float64(n))
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
	return total, nil
}
