package app

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// inflight tracks the first attempts enqueued from each partition until they are made.
type inflight struct {
	mu      sync.Mutex
	claims  map[uuid.UUID]int // claim id -> partition
	count   map[int]int
	changed chan struct{} // closed and replaced on every done
}

func newInflight() *inflight {
	return &inflight{claims: map[uuid.UUID]int{}, count: map[int]int{}, changed: make(chan struct{})}
}

func (f *inflight) add(id uuid.UUID, partition int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.claims[id]; !ok {
		f.claims[id] = partition
		f.count[partition]++
	}
}

func (f *inflight) done(id uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.claims[id]
	if !ok {
		return
	}
	delete(f.claims, id)
	f.count[p]--
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait returns once no first attempt of partition is in flight, or with ctx's error.
func (f *inflight) wait(ctx context.Context, partition int) error {
	for {
		f.mu.Lock()
		n, changed := f.count[partition], f.changed
		f.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}
