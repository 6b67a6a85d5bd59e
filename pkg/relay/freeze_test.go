package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/testkit"
)

func init() { testkit.RegisterHelper("relay-replica", relayReplica) }

// freezeLease is the lease of the replicas of TestFrozenLeaderIsTakenOverAndNeverPublishesAgain.
const freezeLease = 2 * time.Second

// relayReplica runs a relay replica on the database and NATS server its environment names
// until SIGTERM (or SIGKILL).
func relayReplica() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	db, err := pg.Connect(ctx, os.Getenv("RELAY_DSN"), "relaytest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	nc, err := nats.Connect(os.Getenv("RELAY_NATS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	js, _ := jetstream.New(nc)
	r, err := New(eventstore.New(db), js, Config{Name: "merchant", Stream: testStream, BatchSize: 25,
		PollInterval: 10 * time.Millisecond, RetryBackoff: 50 * time.Millisecond,
		Lease:  Lease{Duration: freezeLease, Renew: 200 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)).With("pid", os.Getpid())})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = r.Run(ctx)
	return 0
}

// The leader of two relay processes is frozen (SIGSTOP, its connections open, as in a long GC
// pause or a partition) while writers keep appending. The other takes over once the lease has
// expired (bound asserted: lease + 10 s) and relays on; the frozen one, resumed (SIGCONT),
// gives up without publishing again, and the stream is exactly the store: in order, gap-free,
// nothing doubled, with JetStream's de-duplication window at its shortest so that only the
// relay's own fences keep doubles out.
func TestFrozenLeaderIsTakenOverAndNeverPublishesAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 100*time.Millisecond)
	env := []string{"RELAY_DSN=" + e.dsn, "RELAY_NATS=" + e.url}
	replicas := []*exec.Cmd{testkit.StartHelper(t, "relay-replica", env...), testkit.StartHelper(t, "relay-replica", env...)}
	stopWriting := e.keepAppending(t)
	defer stopWriting()

	leader, token := e.waitForLeader(t, replicas)
	e.waitForCount(t, 50)
	other := replicas[1-leader]
	frozen := replicas[leader].Process.Pid
	frozenAt := time.Now()
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(frozen, syscall.SIGCONT) //nolint:errcheck // a failed test must not leave it frozen

	var newToken int64
	testkit.WaitFor(t, freezeLease+10*time.Second, 5*time.Millisecond, func() error {
		holder, tok := e.leaseRow(t)
		if tok <= token || !holdsPid(holder, other.Process.Pid) {
			return fmt.Errorf("lease still %s token %d", holder, tok)
		}
		newToken = tok
		return nil
	})
	t.Logf("the standby took the lease over %s after the leader froze (lease %s)", time.Since(frozenAt).Round(time.Millisecond), freezeLease)

	// The new leader relays while the old one is frozen.
	e.waitForCount(t, e.lastSeq(t)+50)
	resumedAfter := e.lastSeq(t)
	if err := syscall.Kill(frozen, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The resumed leader notices and gives up: it closes the session that held its token's lock.
	testkit.WaitFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if e.tokenLockHeld(t, token) {
			return errors.New("the old leader still holds its token's lock")
		}
		return nil
	})
	e.waitForCount(t, e.lastSeq(t)+50) // appends go on after it resumed
	stopWriting()
	e.waitForCount(t, uint64(e.committedCount(t)))
	e.assertExactlyTheStore(t)

	var last int64
	for _, m := range e.streamContents(t) {
		tok, err := strconv.ParseInt(m.Header.Get(HeaderRelayToken), 10, 64)
		if err != nil {
			t.Fatalf("message %d: token %q", m.Sequence, m.Header.Get(HeaderRelayToken))
		}
		if tok < last {
			t.Fatalf("message %d published with token %d after one with token %d", m.Sequence, tok, last)
		}
		if m.Sequence > resumedAfter && tok <= token {
			t.Fatalf("message %d published with the frozen leader's token %d after it resumed", m.Sequence, tok)
		}
		last = tok
	}
	if holder, tok := e.leaseRow(t); tok != newToken || !holdsPid(holder, other.Process.Pid) {
		t.Fatalf("lease now %s token %d, want the new leader's token %d kept", holder, tok, newToken)
	}
	e.waitForCheckpointAtTheEnd(t, newToken)
}

// keepAppending appends events to a few streams from a goroutine until the returned function
// is called (more than once is fine).
func (e *env) keepAppending(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			id := fmt.Sprintf("m-%d", i%5)
			if _, err := e.store.Append(ctx, id, eventstore.AnyVersion, event(id, i)); err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
			time.Sleep(2 * time.Millisecond) // a steady stream, not a flood
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// waitForLeader waits for one of replicas to hold the lease and returns its index and token.
func (e *env) waitForLeader(t *testing.T, replicas []*exec.Cmd) (int, int64) {
	t.Helper()
	var (
		leader int
		token  int64
	)
	testkit.WaitFor(t, 60*time.Second, 10*time.Millisecond, func() error {
		holder, tok := e.leaseRow(t)
		for i, r := range replicas {
			if holdsPid(holder, r.Process.Pid) {
				leader, token = i, tok
				return nil
			}
		}
		return fmt.Errorf("lease held by %q", holder)
	})
	return leader, token
}

func (e *env) leaseRow(t *testing.T) (holder string, token int64) {
	t.Helper()
	err := e.store.DB().QueryRow(context.Background(), `SELECT holder, token FROM relay_leases WHERE name = 'merchant'`).Scan(&holder, &token)
	if err != nil && !isNoRows(err) {
		t.Fatal(err)
	}
	return holder, token
}

func holdsPid(holder string, pid int) bool {
	return strings.Contains(holder, ":"+strconv.Itoa(pid)+":")
}

// tokenLockHeld tells whether a session holds the advisory lock of the relay's lease token.
func (e *env) tokenLockHeld(t *testing.T, token int64) bool {
	t.Helper()
	k1, k2 := lockKeys("merchant", token)
	var held bool
	err := e.store.DB().QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid::bigint = $1 AND objid::bigint = $2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`, k1, k2).Scan(&held)
	if err != nil {
		t.Fatal(err)
	}
	return held
}

func (e *env) lastSeq(t *testing.T) uint64 {
	t.Helper()
	s, err := e.js.Stream(context.Background(), testStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// waitForCheckpointAtTheEnd waits until the checkpoint, fenced by token, is the store's last
// event: the old leader moved it neither back nor anywhere else.
func (e *env) waitForCheckpointAtTheEnd(t *testing.T, token int64) {
	t.Helper()
	all := e.readAllCommitted(t)
	want := all[len(all)-1].Position
	testkit.WaitFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		cp, err := loadCheckpoint(context.Background(), e.store.DB(), "merchant")
		if err != nil {
			return err
		}
		var fence int64
		if err := e.store.DB().QueryRow(context.Background(), `SELECT lease_token FROM relay_checkpoints WHERE name = 'merchant'`).Scan(&fence); err != nil {
			return err
		}
		if cp.Position != want || fence != token {
			return fmt.Errorf("checkpoint %s with token %d, want %s with %d", cp.Position, fence, want, token)
		}
		return nil
	})
}
