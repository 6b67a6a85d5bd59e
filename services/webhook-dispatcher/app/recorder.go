package app

import (
	"context"
	"sync"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// recordBatch bounds the attempts one statement records.
const recordBatch = 256

// recordQueue bounds the attempts waiting to be recorded; when it is full, lanes wait before
// their next attempt, so a slow database slows deliveries instead of piling up results.
const recordQueue = 1024

// recorder writes the results of first attempts in batches: whatever finished while the
// previous batch was being written goes in the next statement, so the database sees one round
// trip and one commit for many attempts, and a lane does not wait for its result to be written
// before it sends its endpoint's next delivery. Each result is written under its claim's
// lease, which outlasts the attempt by leaseMargin for this. Until a result is written its
// delivery stays leased: after a crash the lease expires and the delivery is attempted again.
type recorder struct {
	d    *Dispatcher
	in   chan domain.Recording
	done chan struct{}

	startOnce, stopOnce sync.Once
	started             bool
}

func newRecorder(d *Dispatcher) *recorder {
	return &recorder{d: d, in: make(chan domain.Recording, recordQueue), done: make(chan struct{})}
}

func (r *recorder) start() {
	r.startOnce.Do(func() {
		r.started = true
		go r.run()
	})
}

// stop writes what is queued and returns once it is written. Nothing may be added afterwards.
func (r *recorder) stop() {
	r.stopOnce.Do(func() {
		if !r.started {
			return
		}
		close(r.in)
		<-r.done
	})
}

// add queues rec to be written (or writes it at once when the recorder is not running).
func (r *recorder) add(ctx context.Context, rec domain.Recording) {
	if !r.started {
		r.write(ctx, []domain.Recording{rec})
		return
	}
	r.in <- rec
}

func (r *recorder) run() {
	defer close(r.done)
	batch := make([]domain.Recording, 0, recordBatch)
	for rec := range r.in {
		batch = append(batch[:0], rec)
	fill:
		for len(batch) < recordBatch {
			select {
			case rec, ok := <-r.in:
				if !ok {
					break fill
				}
				batch = append(batch, rec)
			default:
				break fill
			}
		}
		r.write(context.Background(), batch)
	}
}

// write records batch in one statement; if that fails, one attempt at a time, so a single
// failing row costs only its own result.
func (r *recorder) write(ctx context.Context, batch []domain.Recording) {
	d := r.d
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.recordTO)
	recorded, err := d.store.RecordAll(rctx, batch)
	cancel()
	if err != nil {
		d.log.Warn("recording first attempts together failed; recording them one by one",
			"count", len(batch), "err", err)
		// One deadline for them all: when the database is away, the lanes must not wait for
		// every result's own timeout in turn.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.recordTO)
		defer cancel()
		for _, rec := range batch {
			r.writeOne(rctx, rec)
		}
		return
	}
	for _, rec := range batch {
		attempts, ok := recorded[rec.Claim.ID]
		if !ok {
			d.log.Warn("recording first attempt", "delivery_id", rec.Claim.ID, "err", domain.ErrInFlight)
			continue
		}
		d.logAttempt(ctx, rec.Claim, rec.Attempted, rec.Attempted.Status, attempts, TriggerEvent)
	}
}

func (r *recorder) writeOne(ctx context.Context, rec domain.Recording) {
	d := r.d
	del, err := d.store.Record(ctx, rec.Claim, rec.Attempted)
	if err != nil {
		d.log.Warn("recording first attempt", "delivery_id", rec.Claim.ID, "err", err)
		return
	}
	d.logAttempt(ctx, rec.Claim, rec.Attempted, del.Status, del.Attempts, TriggerEvent)
}
