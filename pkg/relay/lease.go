package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
)

// leadership is this process's lease on the relay: the row of relay_leases (holder, fencing
// token, expiry on PostgreSQL's clock) that it took over and renews on a dedicated connection.
// That connection also holds a session advisory lock named after the token, so that a standby
// takes over at once from a leader whose session is gone (killed, crashed: its connection
// closes), and only after the expiry from one that hangs or is cut off with its connection
// open (SIGSTOP, a partition), which a lock alone would keep in charge until TCP keepalive
// gives up, hours later.
//
// The leader publishes only while held says its lease is valid, measured on its own monotonic
// clock from the start of its last successful renewal, with a margin below the lease; its
// context ends when a renewal fails. The token fences what it writes: every checkpoint write
// requires it (saveCheckpoint), and every message carries it (HeaderRelayToken).
type leadership struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	conn   *pgxpool.Conn
	done   chan struct{}
	name   string
	token  int64
	cfg    Lease

	mu         sync.Mutex
	validUntil time.Time // monotonic: the leader may publish until then
	released   sync.Once
}

// errLeaseLost reports that another replica took the lease over (its token is newer).
var errLeaseLost = errors.New("relay lease taken over by another replica")

// errLeaseExpired reports that the leader could not renew its lease in time to keep publishing.
var errLeaseExpired = errors.New("relay lease not renewed in time")

// afterLock, when set (tests), runs right after the lease and its lock are taken.
var afterLock func()

// lockKeys are the two int4 keys of the advisory lock of a relay's lease token: the relay
// name's hash, and the token (modulo 2^31, both non-negative, the same in SQL as here). The
// two-key form has its own key space, apart from the bigint keys of the event store's locks.
func lockKeys(name string, token int64) (int32, int32) {
	h := fnv.New32a()
	h.Write([]byte("payplat-relay:" + name))
	return int32(h.Sum32() & 0x7fffffff), int32(token % (1 << 31))
}

// holderID names this process in relay_leases (host, pid, and a random part for two relays of
// one process, as tests run).
func holderID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}

// takeOverSQL takes the lease of $1 when it has expired or when the holder's session is gone
// (its token's lock is free), writes the new token into the checkpoint row (the fence), and
// takes the new token's lock, in one statement: the new token is visible to others only once
// its lock is held. The lock of the old token is tried as a transaction lock, released at once.
const takeOverSQL = `
WITH taken AS (
    UPDATE relay_leases
       SET holder = $2, token = token + 1, acquired_at = now(), renewed_at = now(),
           expires_at = now() + make_interval(secs => $3)
     WHERE name = $1
       AND (expires_at <= now() OR pg_try_advisory_xact_lock($4, (token % 2147483648)::int4))
 RETURNING token),
fence AS (
    INSERT INTO relay_checkpoints AS c (name, tx_id, position, stream_seq, lease_token)
    SELECT $1, '0'::xid8, 0, 0, token FROM taken
    ON CONFLICT (name) DO UPDATE SET lease_token = excluded.lease_token)
SELECT token, pg_try_advisory_lock($4, (token % 2147483648)::int4) FROM taken`

// acquireLeadership blocks until this process holds the relay's lease, looking every
// cfg.standbyPoll whether it may take it over.
func acquireLeadership(ctx context.Context, store *eventstore.Store, name, holder string, cfg Lease) (*leadership, error) {
	conn, err := store.DB().Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquiring connection for the relay lease: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT set_config('application_name', $1, false)`, "relay:"+name); err != nil {
		conn.Release()
		return nil, err
	}
	if _, err := conn.Exec(ctx, `INSERT INTO relay_leases (name) VALUES ($1) ON CONFLICT DO NOTHING`, name); err != nil {
		conn.Release()
		return nil, fmt.Errorf("creating the relay lease: %w", err)
	}
	key, _ := lockKeys(name, 0)
	for {
		start := time.Now()
		var (
			token  int64
			locked bool
		)
		err := conn.QueryRow(ctx, takeOverSQL, name, holder, cfg.Duration.Seconds(), key).Scan(&token, &locked)
		switch {
		case err == nil && locked:
			l := newLeadership(ctx, conn, name, token, cfg, start)
			if afterLock != nil {
				afterLock()
			}
			if ctx.Err() != nil {
				// Stopped while taking over: give the lease back rather than leave the next
				// leader waiting for its expiry.
				l.release()
				return nil, ctx.Err()
			}
			return l, nil
		case err == nil || !isNoRows(err):
			// The statement may have taken a lock and failed after it, or taken the lease
			// without its lock (a key collision): closing the session releases what it holds,
			// and the lease, if taken, expires.
			closeConn(conn)
			if err == nil {
				err = errors.New("the lease token's advisory lock is taken")
			}
			return nil, fmt.Errorf("taking the relay lease: %w", err)
		}
		if !sleep(ctx, cfg.standbyPoll()) {
			conn.Release()
			return nil, ctx.Err()
		}
	}
}

func newLeadership(ctx context.Context, conn *pgxpool.Conn, name string, token int64, cfg Lease, renewedAt time.Time) *leadership {
	lctx, cancel := context.WithCancelCause(ctx)
	l := &leadership{ctx: lctx, cancel: cancel, conn: conn, done: make(chan struct{}), name: name, token: token, cfg: cfg}
	l.extend(renewedAt)
	go l.watch()
	return l
}

// extend makes the lease valid for the leader until the margin before its expiry, counted from
// when the renewal that set the expiry started (the database's now() is later than that).
func (l *leadership) extend(renewStarted time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.validUntil = renewStarted.Add(l.cfg.Duration - l.cfg.margin())
}

// until is when the leader must have stopped publishing unless it renews.
func (l *leadership) until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validUntil
}

// held tells whether the leader may still publish: its lease is valid, by its own clock, and
// its context (ended by a failed renewal) is not.
func (l *leadership) held() bool {
	return l.ctx.Err() == nil && time.Now().Before(l.until())
}

// watch renews the lease every Renew and ends the leadership when a renewal fails: after a
// freeze, a renewal that comes too late fails on its deadline before it is even sent.
func (l *leadership) watch() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.Renew)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
			if err := l.renew(); err != nil {
				l.cancel(err)
				return
			}
		}
	}
}

// renew extends the lease if this process still holds its token, bounded by the time the lease
// has left to be valid.
func (l *leadership) renew() error {
	start := time.Now()
	ctx, cancel := context.WithDeadline(l.ctx, l.until())
	defer cancel()
	tag, err := l.conn.Exec(ctx, `UPDATE relay_leases SET expires_at = now() + make_interval(secs => $3), renewed_at = now()
        WHERE name = $1 AND token = $2`, l.name, l.token, l.cfg.Duration.Seconds())
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err != nil && time.Now().After(l.until())):
		return errLeaseExpired
	case err != nil:
		return fmt.Errorf("renewing the relay lease: %w", err)
	case tag.RowsAffected() != 1:
		return errLeaseLost
	}
	l.extend(start)
	return nil
}

// release ends the lease for the next leader at once, if this process still holds it, and
// closes the dedicated connection, which releases the token's lock whatever state it is in.
func (l *leadership) release() {
	l.released.Do(func() {
		l.cancel(context.Canceled)
		<-l.done
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = l.conn.Exec(ctx, `UPDATE relay_leases SET expires_at = '-infinity' WHERE name = $1 AND token = $2`, l.name, l.token)
		closeConn(l.conn)
	})
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// closeConn closes a pooled connection for good (a session lock cannot outlive it) and gives
// it back to the pool, which drops it.
func closeConn(conn *pgxpool.Conn) {
	_ = conn.Conn().Close(context.Background())
	conn.Release()
}
