package relay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

const testStream = "MERCHANTS"

type env struct {
	store *eventstore.Store
	nc    *nats.Conn
	js    jetstream.JetStream
	url   string
	dsn   string
}

func newEnv(t testing.TB, dupWindow time.Duration) *env {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: "relaytest", Sources: []fs.FS{eventstore.Migrations}})
	store := eventstore.New(testkit.NewPool(t, dsn, "relaytest"))
	url := testkit.NATS(t)
	nc, js := connect(t, url)
	_, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: testStream, Subjects: []string{"merchant.>"}, Storage: jetstream.FileStorage, Duplicates: dupWindow,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: store, nc: nc, js: js, url: url, dsn: dsn}
}

func connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func (e *env) appendEvents(t *testing.T, streams, perStream int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < perStream; i++ {
		for s := 0; s < streams; s++ {
			id := fmt.Sprintf("m-%d", s)
			if _, err := e.store.Append(ctx, id, eventstore.AnyVersion, event(id, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func event(stream string, i int) eventstore.Event {
	return eventstore.Event{
		ID: uuid.New(), Type: "merchant.status_changed", Subject: "merchant.test.c1.status_changed",
		CompanyID: "c1", Environment: "test", OccurredAt: time.Now().UTC(),
		Payload: []byte(fmt.Sprintf("%s#%d", stream, i)),
	}
}

func (e *env) relay(t *testing.T, cfg Config) *Relay {
	t.Helper()
	cfg.Name, cfg.Stream = "merchant", testStream
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	cfg.RetryBackoff = 20 * time.Millisecond
	cfg.Logger = testLogger(t)
	r, err := New(e.store, e.js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run starts r and returns a stop function that cancels it and waits for it to return.
func run(r *Relay) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	return func() { cancel(); <-done }
}

// streamContents reads every message of the stream in sequence order.
func (e *env) streamContents(t *testing.T) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	s, err := e.js.Stream(ctx, testStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (e *env) waitForCount(t *testing.T, n uint64) {
	t.Helper()
	defer func() {
		if t.Failed() {
			e.diagnose(t)
		}
	}()
	testkit.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error { return e.streamHolds(n) })
}

func (e *env) streamHolds(n uint64) error {
	s, err := e.js.Stream(context.Background(), testStream)
	if err != nil {
		return err
	}
	info, err := s.Info(context.Background())
	if err != nil {
		return err
	}
	if info.State.Msgs < n {
		return fmt.Errorf("stream holds %d of %d messages", info.State.Msgs, n)
	}
	return nil
}

// diagnose logs what a stalled relay may be waiting for: the pool, the cluster's transactions
// (an old one holds back the gap-safe reader) and the advisory locks (the relay leader lock).
func (e *env) diagnose(t *testing.T) {
	t.Helper()
	st := e.store.DB().Stat()
	t.Logf("pool: total=%d acquired=%d idle=%d max=%d", st.TotalConns(), st.AcquiredConns(), st.IdleConns(), st.MaxConns())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := e.store.DB().Query(ctx, `SELECT pid, datname, coalesce(application_name,''), coalesce(state,''),
		coalesce(backend_xid::text,''), coalesce(backend_xmin::text,''), coalesce((now()-xact_start)::text,''), left(query, 100)
		FROM pg_stat_activity WHERE backend_type = 'client backend' AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL
		OR application_name LIKE 'relay:%')`)
	if err != nil {
		t.Logf("pg_stat_activity: %v", err)
		return
	}
	for rows.Next() {
		var pid int
		var db, app, state, xid, xmin, age, q string
		if err := rows.Scan(&pid, &db, &app, &state, &xid, &xmin, &age, &q); err == nil {
			t.Logf("backend %d db=%s app=%s state=%s xid=%s xmin=%s xact_age=%s query=%q", pid, db, app, state, xid, xmin, age, q)
		}
	}
	rows.Close()
	var xmin string
	if err := e.store.DB().QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xmin); err == nil {
		t.Logf("snapshot xmin %s", xmin)
	}
	var locks int
	if err := e.store.DB().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted`).Scan(&locks); err == nil {
		t.Logf("granted advisory locks in the cluster: %d", locks)
	}
}

// committedCount is the number of events committed in the store now.
func (e *env) committedCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.store.DB().QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// readAllCommitted reads the whole store gap-safely once every event committed now is readable.
// The gap-safe reader stops below the cluster's oldest transaction in flight, which may belong
// to another test running in parallel (TestRelayDoesNotSkipLateCommit holds one open on
// purpose), so it is read again until it holds everything.
func (e *env) readAllCommitted(t *testing.T) []eventstore.Recorded {
	t.Helper()
	want := e.committedCount(t)
	var all []eventstore.Recorded
	testkit.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		var err error
		if all, err = e.store.ReadAll(context.Background(), e.store.DB(), eventstore.Position{}, 1_000_000); err != nil {
			return err
		}
		if len(all) < want {
			return fmt.Errorf("gap-safe read sees %d of %d committed events", len(all), want)
		}
		return nil
	})
	return all
}

// assertExactlyTheStore checks that the stream holds every event of the store exactly once,
// each store stream in version order, and that the stream's order is the store's gap-safe
// order.
func (e *env) assertExactlyTheStore(t *testing.T) {
	t.Helper()
	all := e.readAllCommitted(t)
	msgs := e.streamContents(t)
	if len(msgs) != len(all) {
		s, _ := e.js.Stream(context.Background(), testStream)
		info, _ := s.Info(context.Background())
		t.Fatalf("stream holds %d messages (state %+v), store %d events", len(msgs), info.State, len(all))
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		id := m.Header.Get(nats.MsgIdHdr)
		if seen[id] {
			t.Fatalf("event %s stored twice", id)
		}
		seen[id] = true
		if id != all[i].ID.String() {
			t.Fatalf("message %d is %s, store order has %s", i, id, all[i].ID)
		}
		if string(m.Data) != string(all[i].Payload) || m.Subject != all[i].Subject {
			t.Fatalf("message %d payload/subject differ from the store", i)
		}
		if m.Header.Get(HeaderStreamVersion) != fmt.Sprint(all[i].Version) || m.Header.Get(HeaderStreamID) != all[i].StreamID {
			t.Fatalf("message %d: stream headers %q v%q", i, m.Header.Get(HeaderStreamID), m.Header.Get(HeaderStreamVersion))
		}
	}
}

func TestRelayPublishesEveryEventInOrderWithHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	e.appendEvents(t, 20, 10)
	stop := run(e.relay(t, Config{BatchSize: 37}))
	defer stop()
	e.waitForCount(t, 200)
	// Appends after the relay caught up are picked up too (notification path).
	e.appendEvents(t, 5, 2)
	e.waitForCount(t, 210)
	stop()
	e.assertExactlyTheStore(t)
	m := e.streamContents(t)[0]
	for _, h := range []string{"Content-Type", HeaderEventType, HeaderPosition, HeaderRelay, HeaderWatermillUUID} {
		if m.Header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	if m.Header.Get(HeaderWatermillUUID) != m.Header.Get(nats.MsgIdHdr) {
		t.Errorf("watermill uuid %q differs from msg id %q", m.Header.Get(HeaderWatermillUUID), m.Header.Get(nats.MsgIdHdr))
	}
}

// The relay dies after JetStream acknowledged a batch and before the checkpoint was written;
// the restarted relay must neither republish it (even with de-duplication off) nor skip what
// follows.
func TestRelayCrashAfterPublishBeforeCheckpointDoublesNothing(t *testing.T) {
	t.Parallel()
	// With the shortest duplicate window JetStream allows, its de-duplication has expired by
	// the restart: the relay's resynchronisation alone must prevent doubles.
	e := newEnv(t, 100*time.Millisecond)
	e.appendEvents(t, 10, 5)

	r := e.relay(t, Config{BatchSize: 20})
	ctx := context.Background()
	if err := r.resync(ctx); err != nil {
		t.Fatal(err)
	}
	batch, err := e.store.ReadAll(ctx, e.store.DB(), r.cp.Position, 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.publish(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Crash: no checkpoint written.
	time.Sleep(150 * time.Millisecond) // let the duplicate window pass
	e.appendEvents(t, 3, 1)

	stop := run(e.relay(t, Config{BatchSize: 20}))
	e.waitForCount(t, 53)
	stop()
	e.assertExactlyTheStore(t)
}

// The relay is killed over and over at random points (its context cancelled, or its NATS
// connection closed mid-batch) while writers keep appending; in the end the stream holds
// exactly the store's events in order.
func TestRelayKilledRepeatedlyLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 150 && ctx.Err() == nil; i++ {
				id := fmt.Sprintf("w%d-%d", w, i%7)
				if _, err := e.store.Append(ctx, id, eventstore.AnyVersion, event(id, i)); err != nil && ctx.Err() == nil {
					if !errors.Is(err, eventstore.ErrConcurrency) {
						t.Error(err)
						return
					}
				}
			}
		}(w)
	}
	for round := 0; round < 12; round++ {
		nc, js := connect(t, e.url)
		r, err := New(e.store, js, Config{Name: "merchant", Stream: testStream, BatchSize: 25,
			PollInterval: 10 * time.Millisecond, RetryBackoff: 10 * time.Millisecond, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		stop := run(r)
		time.Sleep(time.Duration(5+rand.IntN(40)) * time.Millisecond)
		if round%2 == 0 {
			nc.Close() // the connection dies under the relay, possibly mid-batch
		}
		stop()
		nc.Close()
	}
	wg.Wait()
	total := e.committedCount(t)
	stop := run(e.relay(t, Config{BatchSize: 25}))
	t.Cleanup(stop)
	e.waitForCount(t, uint64(total))
	stop()
	e.assertExactlyTheStore(t)
}

// Two replicas run the relay at once: one leads, and the stream still holds each event once,
// in order.
func TestTwoRelayReplicasPublishOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	e.appendEvents(t, 10, 10)
	stopA := run(e.relay(t, Config{BatchSize: 10}))
	stopB := run(e.relay(t, Config{BatchSize: 10}))
	e.waitForCount(t, 100)
	// The leader goes away; the other takes over and relays new events.
	stopA()
	e.appendEvents(t, 10, 2)
	e.waitForCount(t, 120)
	stopB()
	e.assertExactlyTheStore(t)
}

// A transaction that commits late (held open while later ones commit) is relayed, in the
// stream after the events that were readable before it.
func TestRelayDoesNotSkipLateCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := context.Background()
	tx, err := e.store.DB().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	late := event("late", 0)
	if _, err := e.store.AppendTx(ctx, tx, "late", eventstore.NoStream, late); err != nil {
		t.Fatal(err)
	}
	stop := run(e.relay(t, Config{BatchSize: 5}))
	defer stop()
	e.appendEvents(t, 5, 2)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	e.waitForCount(t, 11)
	stop()
	e.assertExactlyTheStore(t)
}

// A relay stopped right after it took the lease and its lock (before it finished becoming
// leader) must not leave the lock behind on a pooled connection, nor the lease to run its
// course (an hour here). Not parallel: it sets a package hook.
func TestRelayStoppedWhileTakingLeadershipLeavesNoLock(t *testing.T) {
	e := newEnv(t, 0)
	e.appendEvents(t, 3, 2)
	ctx, cancel := context.WithCancel(context.Background())
	afterLock = cancel
	_, err := acquireLeadership(ctx, e.store, "merchant", "stopped", Lease{Duration: time.Hour, Renew: time.Minute})
	afterLock = nil
	if err == nil {
		t.Fatal("leadership taken although its context was cancelled")
	}
	var held int
	if err := e.store.DB().QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).
		Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Fatalf("%d advisory locks still held after the failed start", held)
	}
	var expired bool
	if err := e.store.DB().QueryRow(context.Background(), `SELECT expires_at <= now() FROM relay_leases WHERE name = 'merchant'`).
		Scan(&expired); err != nil || !expired {
		t.Fatalf("the lease of the failed start is still running (%v)", err)
	}
	stop := run(e.relay(t, Config{BatchSize: 10}))
	defer stop()
	e.waitForCount(t, 6)
}
