package adapters_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// positions returns the positions of partitions 0..n-1 in stream.
func positions(t *testing.T, ps *adapters.Partitions, stream string, n int) map[int]uint64 {
	t.Helper()
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	got, err := ps.Positions(context.Background(), stream, parts)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A batch's deliveries commit only with the positions of its partitions, and only while every
// one of them is leased to the dispatcher applying it: a batch read for a partition that passed
// to another dispatcher (or whose lease ran out) creates nothing and moves no position. A
// position never moves back.
func TestDeliveriesCommitOnlyUnderTheLeaseOfEveryPartitionRead(t *testing.T) {
	t.Parallel()
	s, db := newStore(t, []string{"a"}, nil)
	ps := adapters.NewPartitions(db)
	ctx := context.Background()
	// newStore made partition 0, leased to intake.Member; partition 1 goes to another dispatcher.
	if err := ps.Ensure(ctx, 2, []string{intake.Stream}, nil); !errors.Is(err, adapters.ErrPartitionsChanged) {
		t.Fatalf("resizing under a live lease: %v, want ErrPartitionsChanged", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO partition_leases (partition, owner, lease_until)
		VALUES (1, 'other', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO partition_positions (stream, partition, seq) VALUES ($1, 1, 0)`, intake.Stream); err != nil {
		t.Fatal(err)
	}
	both := domain.Advance{Member: intake.Member, Stream: intake.Stream, Partitions: []int{0, 1}, Seq: 10}
	if _, err := s.CreateDeliveries(ctx, []domain.NewDelivery{newDelivery(uuid.New(), "a")}, time.Minute, both); !errors.Is(err, domain.ErrPartitionLost) {
		t.Fatalf("a batch read for another's partition: %v, want ErrPartitionLost", err)
	}
	if n := count(t, db, `SELECT count(*) FROM deliveries`); n != 0 {
		t.Fatalf("%d deliveries created by a batch without its leases", n)
	}
	if got := positions(t, ps, intake.Stream, 2); !maps.Equal(got, map[int]uint64{0: 0, 1: 0}) {
		t.Fatalf("positions %v after a refused batch, want both 0", got)
	}

	mine := domain.Advance{Member: intake.Member, Stream: intake.Stream, Partitions: []int{0}, Seq: 10}
	if claims, err := s.CreateDeliveries(ctx, []domain.NewDelivery{newDelivery(uuid.New(), "a")}, time.Minute, mine); err != nil || len(claims) != 1 {
		t.Fatalf("claims %v: %v", claims, err)
	}
	older := mine
	older.Seq = 4
	if _, err := s.CreateDeliveries(ctx, nil, time.Minute, older); err != nil {
		t.Fatal(err)
	}
	if got := positions(t, ps, intake.Stream, 2); !maps.Equal(got, map[int]uint64{0: 10, 1: 0}) {
		t.Fatalf("positions %v, want partition 0 at 10 (never back), 1 untouched", got)
	}

	if _, err := db.Exec(ctx, `UPDATE partition_leases SET lease_until = now() - interval '1 second' WHERE partition = 0`); err != nil {
		t.Fatal(err)
	}
	mine.Seq = 20
	if _, err := s.CreateDeliveries(ctx, nil, time.Minute, mine); !errors.Is(err, domain.ErrPartitionLost) {
		t.Fatalf("a batch under an expired lease: %v, want ErrPartitionLost", err)
	}
}

// The partitions are created with a position in every source stream (the given start, 0 for a
// stream without one); a stream added later gets its positions at the next start. Their number
// changes only while no dispatcher holds a lease, every new partition starting each stream
// where the least advanced old one was.
func TestPartitionsChangeInNumberOnlyWhenNoDispatcherRuns(t *testing.T) {
	t.Parallel()
	ps, db := noPartitions(t)
	ctx := context.Background()
	if err := ps.Ensure(ctx, 4, []string{"PAYMENTS", "POOL"}, starts(map[string]uint64{"PAYMENTS": 7})); err != nil {
		t.Fatal(err)
	}
	if got := positions(t, ps, "PAYMENTS", 4); !maps.Equal(got, map[int]uint64{0: 7, 1: 7, 2: 7, 3: 7}) {
		t.Fatalf("PAYMENTS positions %v, want 7 each", got)
	}
	if got := positions(t, ps, "POOL", 4); !maps.Equal(got, map[int]uint64{0: 0, 1: 0, 2: 0, 3: 0}) {
		t.Fatalf("POOL positions %v, want 0 each", got)
	}
	if _, err := db.Exec(ctx, `UPDATE partition_positions SET seq = 100 + partition WHERE stream = 'PAYMENTS';
		UPDATE partition_positions SET seq = 50 - partition WHERE stream = 'POOL'`); err != nil {
		t.Fatal(err)
	}
	if err := ps.Ensure(ctx, 4, []string{"PAYMENTS", "POOL", "DEVICES"}, starts(map[string]uint64{"PAYMENTS": 1, "DEVICES": 3})); err != nil {
		t.Fatal(err)
	}
	if got := positions(t, ps, "PAYMENTS", 4); !maps.Equal(got, map[int]uint64{0: 100, 1: 101, 2: 102, 3: 103}) {
		t.Fatalf("PAYMENTS positions %v after a restart, want them kept", got)
	}
	if got := positions(t, ps, "DEVICES", 4); !maps.Equal(got, map[int]uint64{0: 3, 1: 3, 2: 3, 3: 3}) {
		t.Fatalf("DEVICES positions %v, want the new stream's start", got)
	}

	if got, err := ps.Claim(ctx, "running", 1, time.Hour); err != nil || len(got) != 1 {
		t.Fatalf("claimed %v: %v", got, err)
	}
	if err := ps.Ensure(ctx, 2, []string{"PAYMENTS", "POOL", "DEVICES"}, nil); !errors.Is(err, adapters.ErrPartitionsChanged) {
		t.Fatalf("resizing while a dispatcher runs: %v, want ErrPartitionsChanged", err)
	}
	if err := ps.Leave(ctx, "running"); err != nil {
		t.Fatal(err)
	}
	if err := ps.Ensure(ctx, 2, []string{"PAYMENTS", "POOL", "DEVICES"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM partition_leases`); n != 2 {
		t.Fatalf("%d partitions, want 2", n)
	}
	for stream, want := range map[string]uint64{"PAYMENTS": 100, "POOL": 47, "DEVICES": 3} {
		if got := positions(t, ps, stream, 2); !maps.Equal(got, map[int]uint64{0: want, 1: want}) {
			t.Fatalf("%s positions %v after resizing, want %d each (the least)", stream, got, want)
		}
	}
}

// noPartitions returns the partitions store of a fresh database without any partition yet.
func noPartitions(t *testing.T) (*adapters.Partitions, *pgxpool.Pool) {
	t.Helper()
	_, db := newStore(t, nil, nil)
	if _, err := db.Exec(context.Background(), `DELETE FROM partition_positions; DELETE FROM partition_leases`); err != nil {
		t.Fatal(err)
	}
	return adapters.NewPartitions(db), db
}

// count runs a count(*) query.
func count(t *testing.T, db *pgxpool.Pool, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// starts is the start of every partition at each stream's value.
func starts(at map[string]uint64) func(string, int) uint64 {
	return func(stream string, _ int) uint64 { return at[stream] }
}

// Positions the stream no longer backs go back: to its last sequence when the same stream lost
// its last messages, to 0 when it was created again (its messages are all new); the first call
// only records the stream, and positions within the stream never move.
func TestPositionsGoBackWhenTheirStreamDoes(t *testing.T) {
	t.Parallel()
	ps, db := noPartitions(t)
	ctx := context.Background()
	if err := ps.Ensure(ctx, 2, []string{"PAYMENTS"}, starts(map[string]uint64{"PAYMENTS": 40})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE partition_positions SET seq = 50 WHERE partition = 1`); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 26, 10, 0, 0, 123456789, time.UTC)
	for _, step := range []struct {
		what    string
		created time.Time
		last    uint64
		moved   int64
		want    map[int]uint64
	}{
		{"first seen, its end beyond every position", created, 60, 0, map[int]uint64{0: 40, 1: 50}},
		{"the same stream, its last messages lost", created, 45, 1, map[int]uint64{0: 40, 1: 45}},
		{"the same stream again", created, 45, 0, map[int]uint64{0: 40, 1: 45}},
		{"created again, already with 3 messages", created.Add(time.Hour), 3, 2, map[int]uint64{0: 0, 1: 0}},
	} {
		moved, err := ps.Rewind(ctx, "PAYMENTS", step.created, step.last)
		if err != nil {
			t.Fatal(err)
		}
		if got := positions(t, ps, "PAYMENTS", 2); moved != step.moved || !maps.Equal(got, step.want) {
			t.Fatalf("%s: moved %d, positions %v; want %d, %v", step.what, moved, got, step.moved, step.want)
		}
	}
}
