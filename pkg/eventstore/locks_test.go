package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
)

// Appending to an existing stream inside a transaction needs the stream's lock, and the lock
// must come before the transaction's first write.
func TestAppendTxNeedsTheStreamLockTakenBeforeWriting(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "a", eventstore.NoStream, ev("a", 0)); err != nil {
		t.Fatal(err)
	}
	err := pgx.BeginFunc(ctx, s.DB(), func(tx pgx.Tx) error {
		_, err := s.AppendTx(ctx, tx, "a", 1, ev("a", 1))
		return err
	})
	if !errors.Is(err, eventstore.ErrStreamNotLocked) {
		t.Fatalf("append without the lock: %v", err)
	}
	err = pgx.BeginFunc(ctx, s.DB(), func(tx pgx.Tx) error {
		if _, err := s.AppendTx(ctx, tx, "b", eventstore.NoStream, ev("b", 0)); err != nil { // a write
			return err
		}
		return s.LockStreams(ctx, tx, "a")
	})
	if !errors.Is(err, eventstore.ErrLockAfterWrite) {
		t.Fatalf("lock after a write: %v", err)
	}
	err = pgx.BeginFunc(ctx, s.DB(), func(tx pgx.Tx) error {
		if err := s.LockStreams(ctx, tx, "a", "b"); err != nil {
			return err
		}
		_, err := s.AppendTx(ctx, tx, "a", 1, ev("a", 1))
		return err
	})
	if err != nil {
		t.Fatalf("append with the lock: %v", err)
	}
	if v, err := s.Version(ctx, s.DB(), "a"); err != nil || v != 2 {
		t.Fatalf("stream a at %d (%v)", v, err)
	}
}

// Transactions appending to several streams at once, each writing something else too: with the
// locks taken first, the gap-safe order of the store follows every stream's versions.
func TestLockedMultiStreamAppendsKeepVersionOrder(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	streams := []string{"p1", "p2", "p3", "p4", "p5"}
	for _, id := range streams {
		if _, err := s.Append(ctx, id, eventstore.NoStream, ev(id, 0)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for i := 0; i < 40; i++ {
				picked := map[string]bool{}
				for len(picked) < 2+rand.IntN(2) {
					picked[streams[rand.IntN(len(streams))]] = true
				}
				var ids []string
				for id := range picked {
					ids = append(ids, id) // random order: LockStreams sorts
				}
				err := pgx.BeginFunc(ctx, s.DB(), func(tx pgx.Tx) error {
					if err := s.LockStreams(ctx, tx, ids...); err != nil {
						return err
					}
					for _, id := range ids {
						if _, err := s.AppendTx(ctx, tx, id, eventstore.AnyVersion, ev(id, i)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	all, err := s.ReadAll(ctx, s.DB(), eventstore.Position{}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	for _, r := range all {
		if r.Version != last[r.StreamID]+1 {
			t.Fatal(fmt.Sprintf("stream %s: version %d read after %d", r.StreamID, r.Version, last[r.StreamID]))
		}
		last[r.StreamID] = r.Version
	}
}
