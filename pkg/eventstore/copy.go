package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

type copier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

var copyColumns = []string{"event_id", "stream_id", "stream_version", "event_type", "subject", "company_id",
	"environment", "correlation_id", "causation_id", "occurred_at", "payload"}

// appendCopy appends a large batch with COPY: the version check and the rows in one
// transaction (the caller's, or one of its own). The unique (stream_id, stream_version)
// constraint still settles a race with a concurrent append.
func (s *Store) appendCopy(ctx context.Context, q Querier, streamID string, expected int64, evs []Event) (AppendResult, error) {
	if b, ok := q.(beginner); ok && q == Querier(s.db) {
		tx, err := b.Begin(ctx)
		if err != nil {
			return AppendResult{}, fmt.Errorf("beginning append: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if expected != NoStream {
			if err := s.LockStreams(ctx, tx, streamID); err != nil {
				return AppendResult{}, err
			}
		}
		res, err := s.appendCopy(ctx, tx, streamID, expected, evs)
		if err != nil {
			return AppendResult{}, err
		}
		if err := tx.Commit(ctx); err != nil {
			return AppendResult{}, s.appendError(err, streamID, expected)
		}
		return res, nil
	}
	c, ok := q.(copier)
	if !ok {
		return AppendResult{}, errors.New("appending a large batch needs a transaction or the store's pool")
	}
	if s.needsLock(q, expected) {
		hi, lo := lockKeyParts(streamID)
		var locked bool
		if err := q.QueryRow(ctx, `SELECT `+fmt.Sprintf(streamLockHeldSQL, "$1::bigint", "$2::bigint"), hi, lo).Scan(&locked); err != nil {
			return AppendResult{}, err
		}
		if !locked {
			return AppendResult{}, fmt.Errorf("%w %s (take it with LockStreams first)", ErrStreamNotLocked, streamID)
		}
	}
	current, err := s.Version(ctx, q, streamID)
	if err != nil {
		return AppendResult{}, err
	}
	if expected >= 0 && current != expected {
		return AppendResult{}, &ConcurrencyError{StreamID: streamID, Expected: expected, Actual: current}
	}
	rows := make([][]any, len(evs))
	for i, e := range evs {
		rows[i] = []any{pgtype.UUID{Bytes: e.ID, Valid: true}, streamID, current + int64(i) + 1, e.Type, e.Subject,
			e.CompanyID, e.Environment, e.CorrelationID, e.CausationID, e.OccurredAt, e.Payload}
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"events"}, copyColumns, pgx.CopyFromRows(rows)); err != nil {
		return AppendResult{}, s.appendError(err, streamID, expected)
	}
	var (
		pos int64
		tx  string
	)
	err = q.QueryRow(ctx, `SELECT position, tx_id::text FROM events WHERE stream_id = $1 AND stream_version = $2`,
		streamID, current+int64(len(evs))).Scan(&pos, &tx)
	if err != nil {
		return AppendResult{}, fmt.Errorf("reading appended position: %w", err)
	}
	txID, err := strconv.ParseUint(tx, 10, 64)
	if err != nil {
		return AppendResult{}, fmt.Errorf("reading transaction id %q: %w", tx, err)
	}
	return AppendResult{Version: current + int64(len(evs)), Last: Position{TxID: txID, Pos: pos}}, nil
}
