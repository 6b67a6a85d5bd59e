package app

import (
	"context"
	"time"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Deliverable returns which of targets have an enabled endpoint: events of the others would
// create no delivery, so the caller can skip them before decoding and rendering their
// payloads. It is read from the store on every call, never cached: an endpoint whose
// configuration committed before the call gets the events the caller creates afterwards, and
// no configuration path needs to invalidate anything.
func (d *Dispatcher) Deliverable(ctx context.Context, targets []domain.Target) (map[domain.Target]bool, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	return d.store.Deliverable(ctx, targets)
}

// Create records one delivery per event and deliverable endpoint (none for a company without
// one, none again for an event already recorded), each claimed for its first attempt, and moves
// the intake's position as adv says, in one transaction: nothing if a partition of adv is no
// longer leased to this dispatcher (domain.ErrPartitionLost). The caller then hands the claims
// to EnqueueFrom.
func (d *Dispatcher) Create(ctx context.Context, news []domain.NewDelivery, adv domain.Advance) ([]domain.Claim, error) {
	claims, err := d.store.CreateDeliveries(ctx, news, d.lease, adv)
	if err != nil {
		return nil, err
	}
	for _, c := range claims {
		d.metrics.created.WithLabelValues(c.EventType).Inc()
	}
	return claims, nil
}

// Enqueue schedules the first attempt of each claim on its endpoint's lane. A claim that does
// not fit is released at once: it stays due, and the next cron run attempts it.
func (d *Dispatcher) Enqueue(ctx context.Context, claims []domain.Claim) {
	d.EnqueueFrom(ctx, -1, claims)
}

// EnqueueFrom is Enqueue for claims made from the events of a partition (-1: none), whose first
// attempts DrainPartition waits for.
func (d *Dispatcher) EnqueueFrom(ctx context.Context, partition int, claims []domain.Claim) {
	for _, c := range claims {
		if partition >= 0 {
			d.inflight.add(c.ID, partition)
		}
		if d.lanes.submit(c) {
			continue
		}
		d.metrics.overflow.Inc()
		d.release(ctx, c)
		d.inflight.done(c.ID)
	}
}

// DrainPartition waits until every first attempt enqueued from partition's events has been
// made (or handed back), or ctx ends: a dispatcher giving a partition up waits for it, so that
// the next owner's first attempts come after its own.
func (d *Dispatcher) DrainPartition(ctx context.Context, partition int) error {
	return d.inflight.wait(ctx, partition)
}

// freshClaim is how old a claim may be when its first attempt starts for the lease taken with
// it to be kept as it is: the attempt then still has at least its timeout plus leaseMargin
// less freshClaim to end and be recorded. An older claim (it waited in its endpoint's queue)
// is renewed first, so time spent queued never eats into the attempt's.
const freshClaim = time.Second

// runQueued is a lane's job: make sure the lease covers the attempt (renew it unless it was
// just taken), attempt, and hand the result to the recorder, which writes it with others in
// one statement while the lane goes on with its next delivery. Once the dispatcher stops,
// queued claims are released instead.
func (d *Dispatcher) runQueued(ctx context.Context, c domain.Claim) {
	if ctx.Err() != nil {
		d.release(ctx, c)
		d.inflight.done(c.ID)
		return
	}
	if c.ClaimedAt.IsZero() || time.Since(c.ClaimedAt) > freshClaim {
		ok, err := d.store.Renew(ctx, c, d.lease)
		if err != nil {
			d.log.Warn("renewing delivery lease", "delivery_id", c.ID, "err", err)
			d.inflight.done(c.ID)
			return // the lease expires and the cron run takes the delivery
		}
		if !ok {
			d.inflight.done(c.ID)
			return // lease lost: another attempt owns the delivery now
		}
	}
	a := d.try(ctx, c, TriggerEvent)
	d.inflight.done(c.ID)
	d.recorder.add(ctx, domain.Recording{Claim: c, Attempted: a})
}

func (d *Dispatcher) release(ctx context.Context, c domain.Claim) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.store.Release(rctx, c); err != nil {
		d.log.Warn("releasing delivery", "delivery_id", c.ID, "err", err)
	}
}

// strandedBatch bounds the deliveries one recovery pass takes.
const strandedBatch = 100

// Recover hands stranded first attempts (their dispatcher died between creating and sending
// them, or their endpoint's queue was full) back to the lanes every interval, until ctx ends,
// so they do not wait for the next cron run. Failed deliveries are left to the cron run.
func (d *Dispatcher) Recover(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		claims, err := d.store.ClaimStranded(ctx, strandedBatch, d.lease)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Warn("recovering stranded deliveries", "err", err)
			}
			continue
		}
		if len(claims) > 0 {
			d.log.Info("recovered stranded deliveries", "count", len(claims))
		}
		d.Enqueue(ctx, claims)
	}
}
