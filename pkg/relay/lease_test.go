package relay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/testkit"
)

func lead(t *testing.T, e *env, holder string, cfg Lease) *leadership {
	t.Helper()
	// The leadership's context derives from this one: it ends with the test, not on return.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	l, err := acquireLeadership(ctx, e.store, "merchant", holder, cfg)
	if err != nil {
		t.Fatalf("%s taking the lease: %v", holder, err)
	}
	t.Cleanup(l.release)
	return l
}

// A leader whose lease expired while its session lived on (frozen, cut off) is taken over with
// a newer token; then it can neither renew, nor move the checkpoint, nor give the new leader's
// lease away.
func TestStaleLeaderIsFenced(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := context.Background()
	long := Lease{Duration: time.Hour, Renew: time.Hour / 4}
	stale := lead(t, e, "stale", long)
	cp := Checkpoint{Position: eventstore.Position{TxID: 10, Pos: 5}, StreamSeq: 5}
	if err := saveCheckpoint(ctx, e.store.DB(), "merchant", stale.token, Checkpoint{}, cp); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DB().Exec(ctx, `UPDATE relay_leases SET expires_at = now() WHERE name = 'merchant'`); err != nil {
		t.Fatal(err)
	}
	next := lead(t, e, "next", long)
	if next.token <= stale.token {
		t.Fatalf("takeover token %d, stale %d", next.token, stale.token)
	}

	back := Checkpoint{Position: eventstore.Position{TxID: 1, Pos: 1}, StreamSeq: 1}
	ahead := Checkpoint{Position: eventstore.Position{TxID: 20, Pos: 9}, StreamSeq: 9}
	for _, to := range []Checkpoint{back, ahead} {
		if err := saveCheckpoint(ctx, e.store.DB(), "merchant", stale.token, cp, to); !errors.Is(err, errCheckpointMoved) {
			t.Fatalf("stale leader moved the checkpoint to %v: %v", to, err)
		}
	}
	if err := stale.renew(); !errors.Is(err, errLeaseLost) {
		t.Fatalf("stale renewal: %v", err)
	}
	stale.release()
	if err := next.renew(); err != nil {
		t.Fatalf("the new leader's renewal after the stale one's release: %v", err)
	}
	if err := saveCheckpoint(ctx, e.store.DB(), "merchant", next.token, cp, ahead); err != nil {
		t.Fatalf("the new leader's checkpoint: %v", err)
	}
	got, err := loadCheckpoint(ctx, e.store.DB(), "merchant")
	if err != nil || got != ahead {
		t.Fatalf("checkpoint %v (%v), want %v", got, err, ahead)
	}
}

// A leader whose session is gone (its process killed: the connection closes) is taken over at
// once, long before its lease (an hour) would expire.
func TestDeadLeadersLeaseIsTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	long := Lease{Duration: time.Hour, Renew: time.Hour / 4}
	dead := lead(t, e, "dead", long)
	pid := dead.conn.Conn().PgConn().PID()
	// Wait until the backend has exited (and so released its locks): without the timeout,
	// pg_terminate_backend returns once the signal is sent, the first takeover attempt could
	// still find the lock held, and the next attempt comes a standby poll later (Renew/4, almost
	// four minutes with this lease).
	var gone bool
	if err := e.store.DB().QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 30000)`, pid).
		Scan(&gone); err != nil || !gone {
		t.Fatalf("terminating the leader's session: %v, %v", gone, err)
	}
	next := lead(t, e, "next", long) // fails after a minute
	if next.token <= dead.token {
		t.Fatalf("takeover token %d, dead %d", next.token, dead.token)
	}
}

// A leader that cannot renew (its renewals wait on a lock here, as they would on a cut-off
// network) stops publishing, and ends its leadership, while its lease still runs on the
// database's clock: before any standby may take over.
func TestLeaderStopsBeforeItsLeaseExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	ctx := context.Background()
	l := lead(t, e, "leader", Lease{Duration: 8 * time.Second, Renew: 2 * time.Second})
	tx, err := e.store.DB().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT * FROM relay_leases WHERE name = 'merchant' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, 5*time.Millisecond, func() error {
		if l.held() {
			return errors.New("the leader still holds its lease")
		}
		return nil
	})
	var running bool
	if err := e.store.DB().QueryRow(ctx, `SELECT expires_at > clock_timestamp() FROM relay_leases WHERE name = 'merchant'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if !running {
		t.Fatal("the leader still held its lease by its own clock after the lease expired")
	}
	select {
	case <-l.ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the leadership did not end")
	}
	if cause := context.Cause(l.ctx); !errors.Is(cause, errLeaseExpired) {
		t.Fatalf("leadership ended with %v, want %v", cause, errLeaseExpired)
	}
}

// A renewal interval that leaves the leader no second try before it must stop is refused;
// unset, it is a fifth of the lease (at most 2 s).
func TestTheRenewalMustAllowASecondTryAndDefaultsFromTheLease(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, nil, Config{Name: "m", Stream: "S", Lease: Lease{Duration: 3 * time.Second, Renew: 2 * time.Second}}); err == nil ||
		!strings.Contains(err.Error(), "RELAY_LEASE_RENEW") {
		t.Fatalf("renewal of 2s for a lease of 3s: %v", err)
	}
	for _, c := range []struct{ lease, want Lease }{
		{Lease{}, Lease{Duration: 10 * time.Second, Renew: 2 * time.Second}},
		{Lease{Duration: time.Second}, Lease{Duration: time.Second, Renew: 200 * time.Millisecond}},
		{Lease{Duration: time.Minute}, Lease{Duration: time.Minute, Renew: 2 * time.Second}},
		{Lease{Duration: time.Minute, Renew: 10 * time.Second}, Lease{Duration: time.Minute, Renew: 10 * time.Second}},
	} {
		r, err := New(nil, nil, Config{Name: "m", Stream: "S", Lease: c.lease})
		if err != nil || r.cfg.Lease != c.want {
			t.Errorf("lease %+v: got %+v (%v), want %+v", c.lease, r.cfg.Lease, err, c.want)
		}
	}
}
