package app

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// laneIdle is how long a lane's worker waits for work before it stops.
const laneIdle = 30 * time.Second

// lanes run first attempts with a bounded queue and bounded concurrency per endpoint, so a
// slow or dead endpoint only ever delays its own deliveries. With one worker per endpoint (the
// default) a company receives its events in the order they were consumed.
type lanes struct {
	concurrency int
	capacity    int
	run         func(ctx context.Context, c domain.Claim)

	mu      sync.Mutex
	ctx     context.Context
	byID    map[uuid.UUID]*lane
	workers sync.WaitGroup
}

type lane struct {
	queue   chan domain.Claim
	workers int
}

func newLanes(concurrency, capacity int, run func(context.Context, domain.Claim)) *lanes {
	return &lanes{concurrency: concurrency, capacity: capacity, run: run, byID: map[uuid.UUID]*lane{},
		ctx: context.Background()}
}

func (l *lanes) start(ctx context.Context) {
	l.mu.Lock()
	l.ctx = ctx
	l.mu.Unlock()
}

// submit queues c on its endpoint's lane; false means the lane is full or stopping.
func (l *lanes) submit(c domain.Claim) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return false
	}
	ln := l.byID[c.EndpointID]
	if ln == nil {
		ln = &lane{queue: make(chan domain.Claim, l.capacity)}
		l.byID[c.EndpointID] = ln
	}
	select {
	case ln.queue <- c:
	default:
		return false
	}
	if ln.workers < l.concurrency {
		ln.workers++
		l.workers.Add(1)
		go l.work(l.ctx, c.EndpointID, ln)
	}
	return true
}

func (l *lanes) work(ctx context.Context, id uuid.UUID, ln *lane) {
	defer l.workers.Done()
	idle := time.NewTimer(laneIdle)
	defer idle.Stop()
	for {
		select {
		case c := <-ln.queue:
			l.run(ctx, c)
			idle.Reset(laneIdle)
		case <-ctx.Done():
			l.drain(ctx, ln)
			return
		case <-idle.C:
			// Stop only if nothing was queued meanwhile (submit queues under the lock).
			l.mu.Lock()
			if len(ln.queue) > 0 {
				l.mu.Unlock()
				idle.Reset(laneIdle)
				continue
			}
			ln.workers--
			if ln.workers == 0 {
				delete(l.byID, id)
			}
			l.mu.Unlock()
			return
		}
	}
}

// drain hands what is still queued back to run, which releases claims once ctx has ended.
func (l *lanes) drain(ctx context.Context, ln *lane) {
	for {
		select {
		case c := <-ln.queue:
			l.run(ctx, c)
		default:
			return
		}
	}
}

func (l *lanes) wait() { l.workers.Wait() }
