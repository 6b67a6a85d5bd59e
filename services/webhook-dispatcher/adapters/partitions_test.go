package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

// member runs an Assigner and records which partitions it consumes at any time.
type member struct {
	a       *app.Assigner
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	active  map[int]bool
	drained atomic.Int32
}

// frozenStore fails every call while frozen, as a dispatcher cut off from PostgreSQL (or frozen)
// would look to the others: its leases stop being renewed.
type frozenStore struct {
	app.PartitionRepository
	frozen atomic.Bool
}

func (f *frozenStore) Heartbeat(ctx context.Context, m string, ttl time.Duration) (int, error) {
	if f.frozen.Load() {
		return 0, errors.New("cut off")
	}
	return f.PartitionRepository.Heartbeat(ctx, m, ttl)
}

func startMember(t *testing.T, store app.PartitionRepository, name string, ttl time.Duration) *member {
	m := &member{active: map[int]bool{}, done: make(chan struct{})}
	m.a = app.NewAssigner(store, name, app.AssignerConfig{Partitions: 8, LeaseTTL: ttl, Tick: 50 * time.Millisecond,
		Consume: func(ctx context.Context, p int, held func() bool) {
			m.mu.Lock()
			m.active[p] = true
			m.mu.Unlock()
			<-ctx.Done()
			m.mu.Lock()
			delete(m.active, p)
			m.mu.Unlock()
		},
		Drain: func(context.Context, int) error { m.drained.Add(1); return nil },
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() { defer close(m.done); _ = m.a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-m.done })
	return m
}

func (m *member) consuming() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for p := range m.active {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// shares polls until the members consume the given numbers of partitions, never one partition
// twice.
func shares(t *testing.T, want []int, ms ...*member) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		seen := map[int]bool{}
		for i, m := range ms {
			got := m.consuming()
			for _, p := range got {
				if seen[p] {
					return fmt.Errorf("partition %d consumed twice", p)
				}
				seen[p] = true
			}
			if len(got) != want[i] {
				return fmt.Errorf("member %d consumes %v, want %d partitions", i, got, want[i])
			}
		}
		return nil
	})
}

// The live dispatchers share the partitions evenly: a second one gets half (the first drains
// and gives them back); when one leaves, the other takes them all at once; when one stops
// renewing (cut off, frozen), the other takes its partitions once their leases end, and the cut
// off one stops consuming before that.
func TestAssignersSharePartitionsAndTakeOverFromOneThatStops(t *testing.T) {
	t.Parallel()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: migrations.Schema, Sources: service.Options(service.Config{}).Migrations})
	store := adapters.NewPartitions(testkit.NewPool(t, dsn, migrations.Schema))
	if err := store.Ensure(context.Background(), 8, nil, nil); err != nil {
		t.Fatal(err)
	}
	const ttl = 2 * time.Second
	a := startMember(t, store, "a", ttl)
	shares(t, []int{8}, a)
	b := startMember(t, store, "b", ttl)
	shares(t, []int{4, 4}, a, b)
	if a.drained.Load() < 4 {
		t.Fatalf("a gave back partitions without draining them (%d drains)", a.drained.Load())
	}
	b.cancel()
	<-b.done
	shares(t, []int{8}, a)

	cutOff := &frozenStore{PartitionRepository: store}
	c := startMember(t, cutOff, "c", ttl)
	shares(t, []int{4, 4}, a, c)
	cutOff.frozen.Store(true)
	shares(t, []int{8, 0}, a, c)
}
