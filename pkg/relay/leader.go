package relay

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
)

// leadership is a held session advisory lock on a dedicated connection. Its ctx ends when the
// connection breaks, since the lock goes with it.
type leadership struct {
	ctx    context.Context
	cancel context.CancelFunc
	conn   *pgxpool.Conn
	done   chan struct{}
}

// lockCheckInterval is how often the leader checks that its lock connection is alive.
const lockCheckInterval = time.Second

func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("payplat-relay:" + name))
	return int64(h.Sum64())
}

// afterLock, when set (tests), runs right after the lock is taken.
var afterLock func()

// acquireLeadership blocks until this process holds the relay's lock.
func acquireLeadership(ctx context.Context, store *eventstore.Store, name string, retry time.Duration) (*leadership, error) {
	conn, err := store.DB().Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquiring connection for relay lock: %w", err)
	}
	for {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(name)).Scan(&got); err != nil {
			conn.Release()
			return nil, fmt.Errorf("taking relay lock: %w", err)
		}
		if got {
			break
		}
		if !sleep(ctx, retry) {
			conn.Release()
			return nil, ctx.Err()
		}
	}
	if afterLock != nil {
		afterLock()
	}
	if _, err := conn.Exec(ctx, `SELECT set_config('application_name', $1, false)`, "relay:"+name); err != nil {
		// The session holds the lock now: back in the pool, a healthy connection would keep it
		// (a cancelled ctx makes Exec return before touching the connection), and no relay
		// could ever lead again. Closing the connection releases the lock for sure.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &leadership{ctx: lctx, cancel: cancel, conn: conn, done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// watch ends the leadership when the lock connection stops answering.
func (l *leadership) watch() {
	defer close(l.done)
	defer l.cancel()
	t := time.NewTicker(lockCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
			if _, err := l.conn.Exec(l.ctx, "SELECT 1"); err != nil {
				return
			}
		}
	}
}

// release gives the lock back by closing its connection (a session lock cannot outlive it).
func (l *leadership) release() {
	l.cancel()
	<-l.done
	// Closing the connection releases the lock for sure, whatever state it is in.
	_ = l.conn.Conn().Close(context.Background())
	l.conn.Release()
}
