package eventstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/jackc/pgx/v5"
)

// ErrLockAfterWrite is returned by LockStreams when the transaction has already written: its
// transaction id is taken, and the lock could no longer order its appends (see LockStreams).
var ErrLockAfterWrite = errors.New("eventstore: streams locked after the transaction wrote")

// ErrStreamNotLocked is returned by AppendTx when a transaction appends to an existing stream
// without holding the stream's lock (LockStreams).
var ErrStreamNotLocked = errors.New("eventstore: appending to an existing stream without its lock")

// StreamLockKey is the advisory lock key of a stream's appends.
func StreamLockKey(streamID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("payplat-stream:" + streamID))
	return int64(h.Sum64())
}

// LockStreams takes the append locks of the streams for the rest of tx (transaction-scoped
// advisory locks, in a fixed order so that two transactions never deadlock on them). A
// transaction that appends to an existing stream inside a transaction of its own (AppendTx)
// must hold the stream's lock, and must take it before it writes anything.
//
// Why: readers and the relay order events by (transaction id, position), and a transaction
// takes its id at its first write. A transaction that took its id, then waited for the stream
// (another one appending its next version), would append the version after with a smaller
// transaction id than the version before it, and the relay would publish the stream out of
// order. Holding the lock before the first write means the id is taken after the previous
// appender committed: ids follow versions. LockStreams returns ErrLockAfterWrite if tx already
// has an id.
func (s *Store) LockStreams(ctx context.Context, tx pgx.Tx, streamIDs ...string) error {
	ids := slices.Clone(streamIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_current_xact_id_if_assigned() IS NOT NULL`)
	for _, id := range ids {
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, StreamLockKey(id))
	}
	br := tx.SendBatch(ctx, b)
	var assigned bool
	if err := br.QueryRow().Scan(&assigned); err != nil {
		_ = br.Close()
		return fmt.Errorf("locking streams: %w", err)
	}
	for range ids {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("locking streams: %w", err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("locking streams: %w", err)
	}
	if assigned {
		return ErrLockAfterWrite
	}
	return nil
}

// streamLockHeldSQL tells whether this session holds the stream's advisory lock (pg_locks shows
// a bigint key as classid = high 32 bits, objid = low 32 bits, objsubid = 1).
const streamLockHeldSQL = `EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
    AND pid = pg_backend_pid() AND objsubid = 1 AND classid::bigint = %s AND objid::bigint = %s)`

func lockKeyParts(streamID string) (int64, int64) {
	k := uint64(StreamLockKey(streamID))
	return int64(k >> 32), int64(k & 0xffffffff)
}

// needsLock tells whether an append through q must hold the stream's lock: inside a caller's
// transaction, to an existing stream. (A single-statement append takes its transaction id in
// the statement that reads the stream's version; a new stream has no version before it.)
func (s *Store) needsLock(q Querier, expected int64) bool {
	if expected == NoStream {
		return false
	}
	_, isTx := q.(pgx.Tx)
	return isTx
}
