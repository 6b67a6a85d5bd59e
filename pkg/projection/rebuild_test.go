package projection_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"
)

func storeDefinition(store *eventstore.Store, p projection.Projector) projection.Definition {
	return projection.Definition{Projector: p, Schema: schema, Tables: []string{"test_payments"},
		Source: projection.StoreSource{Store: store}}
}

// watchRowCount counts the table's rows until stop, and reports the lowest count seen after
// the first: a reader must never see a half-built table.
func watchRowCount(db *pgxpool.Pool, stop <-chan struct{}) (lowest func() int64) {
	var low atomic.Int64
	low.Store(-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int64
			if err := db.QueryRow(context.Background(), `SELECT count(*) FROM test_payments`).Scan(&n); err == nil {
				if l := low.Load(); l < 0 || n < l {
					low.Store(n)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() int64 { <-done; return low.Load() }
}

// A store-fed projection rebuilt while events keep being appended and its live runner keeps
// applying them: readers never see fewer rows than before, and afterwards the table holds every
// event exactly once, as a fresh verify confirms.
func TestAStoreFedRebuildUnderLoadHidesNoRowsAndAppliesEveryEventOnce(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	store := eventstore.New(db)
	p := &paymentsProjector{}
	appendPayments(t, store, 0, 300)
	live := projection.NewStoreRunner(store, p, projection.StoreRunnerOptions{BatchSize: 25, PollInterval: 5 * time.Millisecond})
	if _, err := live.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	liveDone := make(chan struct{})
	go func() { defer close(liveDone); _ = live.Run(ctx) }()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); appendPayments(t, store, 300, 300) }()
	stopWatch := make(chan struct{})
	lowest := watchRowCount(db, stopWatch)

	var progressCalls, firstDone, lastDone atomic.Int64
	firstDone.Store(-1)
	res, err := projection.Rebuild(context.Background(), db, storeDefinition(store, p),
		projection.RebuildOptions{BatchSize: 40, Progress: func(done, total int64) {
			if progressCalls.Add(1) == 1 {
				firstDone.Store(done)
			}
			lastDone.Store(done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	// One report at the start (0 done, so that a rate counts from there), then after batches,
	// the last with everything.
	if res.Events < 300 || progressCalls.Load() < 3 || firstDone.Load() != 0 || lastDone.Load() != res.Events+res.Skipped {
		t.Errorf("rebuild applied %d events with %d progress calls, first at %d, last at %d",
			res.Events, progressCalls.Load(), firstDone.Load(), lastDone.Load())
	}
	close(stopWatch)
	if low := lowest(); low < 300 {
		t.Errorf("a reader saw %d rows during the rebuild (300 before it)", low)
	}
	wg.Wait()
	cancel()
	<-liveDone
	if _, err := live.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertEachOnce(t, table(t, db), 600)

	diffs, _, err := projection.Verify(context.Background(), db, storeDefinition(store, p), projection.RebuildOptions{})
	if err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the rebuild: %v %v", diffs, err)
	}
}

// Verify reports a corrupted row from both sides, and a rebuild repairs it.
func TestVerifyFindsACorruptedRowAndRebuildRepairsIt(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	store := eventstore.New(db)
	p := &paymentsProjector{}
	appendPayments(t, store, 0, 50)
	live := projection.NewStoreRunner(store, p, projection.StoreRunnerOptions{})
	if _, err := live.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	def := storeDefinition(store, p)
	if diffs, _, err := projection.Verify(context.Background(), db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify of a healthy table: %v %v", diffs, err)
	}
	if _, err := db.Exec(context.Background(), `UPDATE test_payments SET amount = '999.00' WHERE payment_id = 'pay_0007'`); err != nil {
		t.Fatal(err)
	}
	diffs, _, err := projection.Verify(context.Background(), db, def, projection.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0].Side != "live" || diffs[1].Side != "rebuilt" ||
		!strings.Contains(diffs[0].Row, `"999.00"`) || !strings.Contains(diffs[1].Row, `"8.50"`) {
		t.Fatalf("verify of a corrupted row: %+v", diffs)
	}
	if _, err := projection.Rebuild(context.Background(), db, def, projection.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if diffs, _, err := projection.Verify(context.Background(), db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the repair: %v %v", diffs, err)
	}
	// The shadow and scratch schemas are gone.
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE $1`, schema+"_%").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d shadow schemas left (%v)", n, err)
	}
}

// A second rebuild of the same projection is refused while one runs.
func TestSecondRebuildIsRefusedWhileOneRuns(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	store := eventstore.New(db)
	p := &paymentsProjector{}
	appendPayments(t, store, 0, 30)
	def := storeDefinition(store, p)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := projection.Rebuild(context.Background(), db, def, projection.RebuildOptions{BatchSize: 10,
			Progress: func(int64, int64) { once.Do(func() { close(entered); <-release }) }})
		done <- err
	}()
	<-entered
	_, err := projection.Rebuild(context.Background(), db, def, projection.RebuildOptions{})
	if !errors.Is(err, projection.ErrRebuildRunning) {
		t.Errorf("second rebuild: %v, want ErrRebuildRunning", err)
	}
	_, _, err = projection.Verify(context.Background(), db, def, projection.RebuildOptions{})
	if !errors.Is(err, projection.ErrRebuildRunning) {
		t.Errorf("verify during a rebuild: %v, want ErrRebuildRunning", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := projection.Rebuild(context.Background(), db, def, projection.RebuildOptions{}); err != nil {
		t.Errorf("rebuild after the first finished: %v", err)
	}
}

// A stream-fed projection rebuilt from JetStream while messages keep arriving and the live
// consumer keeps applying them: afterwards every event is in the table exactly once (the live
// consumer does not apply again what the rebuild applied), and verify finds no difference.
func TestAStreamFedRebuildUnderLoadHidesNoRowsAndAppliesEveryEventOnce(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	p := &paymentsProjector{}
	r := e.runner(t, p)
	for i := 0; i < 200; i++ {
		e.publishPayment(t, payment(i), "")
	}
	drain(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	liveDone := make(chan struct{})
	go func() { defer close(liveDone); _ = r.Run(ctx) }()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 200; i < 400; i++ {
			e.publishPayment(t, payment(i), "")
		}
	})
	stopWatch := make(chan struct{})
	lowest := watchRowCount(e.db, stopWatch)
	def := projection.Definition{Projector: p, Schema: schema, Tables: []string{"test_payments"},
		Source: projection.StreamSource{JS: e.js, Stream: "PAYMENTS"}}
	if _, err := projection.Rebuild(context.Background(), e.db, def, projection.RebuildOptions{BatchSize: 30}); err != nil {
		t.Fatal(err)
	}
	close(stopWatch)
	if low := lowest(); low < 200 {
		t.Errorf("a reader saw %d rows during the rebuild (200 before it)", low)
	}
	wg.Wait()
	// Let the live consumer drain what is left, then compare.
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		info, err := e.cons.Info(context.Background())
		if err != nil {
			return err
		}
		if info.NumPending+uint64(info.NumAckPending) > 0 {
			return fmt.Errorf("consumer lag %d", info.NumPending+uint64(info.NumAckPending))
		}
		return nil
	})
	cancel()
	<-liveDone
	assertEachOnce(t, table(t, e.db), 400)
	diffs, _, err := projection.Verify(context.Background(), e.db, def, projection.RebuildOptions{})
	if err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the rebuild: %v %v", diffs, err)
	}
}

// Events that the rebuild applied but the live consumer had not yet taken are skipped by it
// after the swap (the swap records the stream sequence it read up to), the events after them
// are applied, and a verify, which rolls back, records nothing: the live consumer then applies
// what it had not taken. Without the swap's record the live consumer would apply the rebuilt
// events a second time; with a record from a build that did not swap, it would lose them.
func TestRebuildSwapMakesTheLiveConsumerSkipRebuiltEvents(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	p := &paymentsProjector{}
	r := e.runner(t, p)
	def := projection.Definition{Projector: p, Schema: schema, Tables: []string{"test_payments"},
		Source: projection.StreamSource{JS: e.js, Stream: "PAYMENTS"}}
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		e.publishPayment(t, payment(i), "")
	}
	drain(t, r)
	for i := 40; i < 100; i++ {
		e.publishPayment(t, payment(i), "")
	}
	// A verify builds all 100 but swaps nothing.
	if diffs, _, err := projection.Verify(ctx, e.db, def, projection.RebuildOptions{BatchSize: 7}); err != nil || len(diffs) != 60 {
		t.Fatalf("verify with 60 events not yet applied: %d diffs, %v", len(diffs), err)
	}
	for i := 100; i < 120; i++ {
		e.publishPayment(t, payment(i), "")
	}
	res, err := projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{BatchSize: 7})
	if err != nil || res.Events != 120 {
		t.Fatalf("rebuild: %+v %v", res, err)
	}
	drain(t, r) // the 80 events the live consumer had not taken: all in the rebuilt table
	assertEachOnce(t, table(t, e.db), 120)
	for i := 120; i < 130; i++ {
		e.publishPayment(t, payment(i), "")
	}
	drain(t, r)
	assertEachOnce(t, table(t, e.db), 130)
	if diffs, _, err := projection.Verify(ctx, e.db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the rebuild: %v %v", diffs, err)
	}
}
