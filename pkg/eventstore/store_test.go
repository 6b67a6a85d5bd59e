package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

var storeSet = migrate.Set{Schema: "es", Sources: []fs.FS{eventstore.Migrations}}

func newStore(t *testing.T) *eventstore.Store { return newStoreB(t) }

func newStoreB(t testing.TB) *eventstore.Store {
	t.Helper()
	pool := testkit.NewPool(t, testkit.NewDatabase(t, storeSet), "es")
	return eventstore.New(pool)
}

func ev(stream string, i int) eventstore.Event {
	return eventstore.Event{
		ID:          uuid.New(),
		Type:        "merchant.created",
		Subject:     "merchant.test.c1.created",
		CompanyID:   "c1",
		Environment: "test",
		OccurredAt:  time.Now().UTC(),
		Payload:     []byte(fmt.Sprintf("%s/%d", stream, i)),
	}
}

func TestAppendedEventsReadBackInVersionOrderAfterTheVersionAskedFor(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()

	res, err := s.Append(ctx, "m-1", eventstore.NoStream, ev("m-1", 1), ev("m-1", 2))
	if err != nil {
		t.Fatalf("first append: %v", err)
	}
	if res.Version != 2 {
		t.Fatalf("version after 2 events = %d, want 2", res.Version)
	}
	if _, err := s.Append(ctx, "m-1", 2, ev("m-1", 3)); err != nil {
		t.Fatalf("append at expected version: %v", err)
	}
	got, err := s.ReadStream(ctx, s.DB(), "m-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("read %d events, want 3", len(got))
	}
	for i, r := range got {
		if r.Version != int64(i+1) || string(r.Payload) != fmt.Sprintf("m-1/%d", i+1) {
			t.Fatalf("event %d: version %d payload %q", i, r.Version, r.Payload)
		}
	}
	tail, _ := s.ReadStream(ctx, s.DB(), "m-1", 2)
	if len(tail) != 1 || tail[0].Version != 3 {
		t.Fatalf("read after version 2: %+v", tail)
	}
}

func TestAppendRejectsWrongExpectedVersion(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "m-1", eventstore.NoStream, ev("m-1", 1)); err != nil {
		t.Fatal(err)
	}
	for _, expected := range []int64{0, 2, 7} {
		_, err := s.Append(ctx, "m-1", expected, ev("m-1", 2))
		var ce *eventstore.ConcurrencyError
		if !errors.As(err, &ce) || !errors.Is(err, eventstore.ErrConcurrency) {
			t.Fatalf("expected %d: got %v, want a concurrency error", expected, err)
		}
		if ce.Actual != 1 {
			t.Fatalf("expected %d: actual version %d, want 1", expected, ce.Actual)
		}
	}
	if v, _ := s.Version(ctx, s.DB(), "m-1"); v != 1 {
		t.Fatalf("stream version %d after rejected appends, want 1", v)
	}
	res, err := s.Append(ctx, "m-1", eventstore.AnyVersion, ev("m-1", 2))
	if err != nil || res.Version != 2 {
		t.Fatalf("AnyVersion append: %v, version %d", err, res.Version)
	}
}

func TestDuplicateEventIDRejected(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	e := ev("m-1", 1)
	if _, err := s.Append(ctx, "m-1", eventstore.NoStream, e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "m-2", eventstore.NoStream, e); !errors.Is(err, eventstore.ErrDuplicateEvent) {
		t.Fatalf("got %v, want ErrDuplicateEvent", err)
	}
}

func TestAnEventWithoutAnIDOrAnEmptyAppendIsRefusedAsInvalid(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	bad := ev("m", 1)
	bad.ID = uuid.Nil
	if _, err := s.Append(context.Background(), "m", eventstore.AnyVersion, bad); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Fatalf("got %v, want ErrInvalidEvent", err)
	}
	if _, err := s.Append(context.Background(), "m", eventstore.AnyVersion); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Fatalf("empty append: got %v, want ErrInvalidEvent", err)
	}
}

// Concurrent appends with the same expected version: exactly one wins, every other gets the
// typed concurrency error.
func TestConcurrentAppendsAtOneExpectedVersionLetExactlyOneWin(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "hot", eventstore.NoStream, ev("hot", 0)); err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		wins     int
		conflict int
		other    []error
	)
	start := make(chan struct{})
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			_, err := s.Append(ctx, "hot", 1, ev("hot", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, eventstore.ErrConcurrency):
				conflict++
			default:
				other = append(other, err)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	if wins != 1 || conflict != writers-1 || len(other) > 0 {
		t.Fatalf("wins=%d conflicts=%d other=%v; want 1 win and %d conflicts", wins, conflict, other, writers-1)
	}
	if v, _ := s.Version(ctx, s.DB(), "hot"); v != 2 {
		t.Fatalf("version %d, want 2", v)
	}
}

// 16 writers append to 200 streams while a reader tails the store, and one transaction is held
// open on purpose while later ones commit. The reader must see every event exactly once, each
// stream in version order, the late transaction included.
func TestTailIsGapSafeUnderConcurrentAppends(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The late transaction takes its position first and commits last.
	lateTx, err := s.DB().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lateTx.Rollback(context.Background())
	late := ev("late", 1)
	lateRes, err := s.AppendTx(ctx, lateTx, "late", eventstore.NoStream, late)
	if err != nil {
		t.Fatal(err)
	}

	const writers, streams, perWriter = 16, 200, 150
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				stream := fmt.Sprintf("s-%d", (w*perWriter+i)%streams)
				if err := appendRetrying(ctx, s, stream, ev(stream, i)); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}

	total := writers*perWriter + 1
	seen := map[uuid.UUID]int{}
	versions := map[string]int64{}
	var after eventstore.Position
	sawLaterBeforeLate := false
	committed := false
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	for len(seen) < total {
		if ctx.Err() != nil {
			t.Fatalf("tail saw %d of %d events before the deadline", len(seen), total)
		}
		select {
		case <-writersDone:
			if !committed {
				// Everything else committed while the late transaction stayed open; a reader
				// by position alone would already be past it.
				sawLaterBeforeLate = naiveReaderIsPast(ctx, t, s, lateRes.Last.Pos)
				if err := lateTx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				committed = true
			}
		default:
		}
		batch, err := s.ReadAll(ctx, s.DB(), after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range batch {
			seen[r.ID]++
			if seen[r.ID] > 1 {
				t.Fatalf("event %s read twice", r.ID)
			}
			if r.Version != versions[r.StreamID]+1 {
				t.Fatalf("stream %s: read version %d (pos %s) after %d", r.StreamID, r.Version, r.Position, versions[r.StreamID])
			}
			versions[r.StreamID] = r.Version
			if !after.Less(r.Position) {
				t.Fatalf("position %s not after %s", r.Position, after)
			}
			after = r.Position
		}
		if len(batch) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	if seen[late.ID] != 1 {
		t.Fatalf("late-committing event seen %d times", seen[late.ID])
	}
	if !sawLaterBeforeLate {
		t.Fatalf("test did not create the late-commit gap it is meant to prove")
	}
	if more, _ := s.ReadAll(ctx, s.DB(), after, 10); len(more) != 0 {
		t.Fatalf("%d extra events after the tail caught up", len(more))
	}
}

// naiveReaderIsPast reports whether events with a higher position than pos are visible, i.e. a
// reader of "position > last" would have moved past pos before it committed.
func naiveReaderIsPast(ctx context.Context, t *testing.T, s *eventstore.Store, pos int64) bool {
	var n int
	if err := s.DB().QueryRow(ctx, `SELECT count(*) FROM events WHERE position > $1`, pos).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func appendRetrying(ctx context.Context, s *eventstore.Store, stream string, e eventstore.Event) error {
	for {
		v, err := s.Version(ctx, s.DB(), stream)
		if err != nil {
			return err
		}
		_, err = s.Append(ctx, stream, v, e)
		if !errors.Is(err, eventstore.ErrConcurrency) {
			return err
		}
	}
}

func TestHeadFollowsCommittedEvents(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if h, err := s.Head(ctx, s.DB()); err != nil || h != (eventstore.Position{}) {
		t.Fatalf("empty store head = %v, %v", h, err)
	}
	res, err := s.Append(ctx, "a", eventstore.NoStream, ev("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		h, err := s.Head(ctx, s.DB())
		if err != nil {
			return err
		}
		if h != res.Last {
			return fmt.Errorf("head %v, want %v", h, res.Last)
		}
		return nil
	})
}

// Transaction ids are ordered as numbers, not as text: 10^k comes after 10^k - 1 (a text sort
// of "100000" and "99999" once made the tail jump ahead and skip events).
func TestReadAllOrdersTransactionIDsNumerically(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	var current uint64
	if err := s.DB().QueryRow(ctx, `SELECT pg_current_xact_id()::text::numeric::bigint`).Scan(&current); err != nil {
		t.Fatal(err)
	}
	boundary := uint64(10)
	for boundary*10 < current {
		boundary *= 10
	}
	// Two past transactions straddling a power of ten; the later one gets the lower position.
	for i, tx := range []uint64{boundary, boundary - 1} {
		e := ev("x", i)
		_, err := s.DB().Exec(ctx, `INSERT INTO events (tx_id, event_id, stream_id, stream_version,
            event_type, subject, company_id, environment, occurred_at, payload)
            VALUES ($1::text::xid8, $2, $3, 1, 'merchant.created', 's', 'c', 'test', now(), 'p')`,
			fmt.Sprint(tx), e.ID, fmt.Sprintf("x-%d", i))
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ReadAll(ctx, s.DB(), eventstore.Position{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Position.TxID != boundary-1 || got[1].Position.TxID != boundary {
		t.Fatalf("read order %+v, want tx %d then %d", positions(got), boundary-1, boundary)
	}
	after, _ := s.ReadAll(ctx, s.DB(), got[0].Position, 10)
	if len(after) != 1 || after[0].Position.TxID != boundary {
		t.Fatalf("read after %s: %+v", got[0].Position, positions(after))
	}
	head, _ := s.Head(ctx, s.DB())
	if head.TxID != boundary {
		t.Fatalf("head %s, want tx %d", head, boundary)
	}
}

func positions(rs []eventstore.Recorded) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Position.String()
	}
	return out
}
