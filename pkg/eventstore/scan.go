package eventstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RawRecord is a recorded event as ScanAll hands it over: the fields a reader needs to decode
// it, the variable-length ones still in the connection's read buffer. Type, StreamID, Subject
// and Payload are valid only until the callback returns; keep a copy of what is kept.
type RawRecord struct {
	Position   Position
	ID         uuid.UUID
	StreamID   []byte
	Version    int64
	Type       []byte
	Subject    []byte
	OccurredAt time.Time
	Payload    []byte
}

// scanColumns are the columns ScanAll reads, all in binary format.
const scanColumns = `position, tx_id, event_id, stream_id, stream_version, event_type, subject, occurred_at, payload`

// ScanAll reads up to limit events after the position, gap-safely like ReadAll, and calls fn
// with each, in order, without copying them out of the connection's buffer first: for
// readers of the whole store (a rebuild reads millions) that decode each event at once. It
// returns how many events fn saw and the position of the last.
func (s *Store) ScanAll(ctx context.Context, q Querier, after Position, limit int, fn func(*RawRecord) error) (int, Position, error) {
	return s.scan(ctx, q, `AND tx_id < pg_snapshot_xmin(pg_current_snapshot())`, after, limit, fn)
}

// ScanVisible is ScanAll without holding back below the oldest transaction in flight, under
// the same conditions as ReadVisible.
func (s *Store) ScanVisible(ctx context.Context, q Querier, after Position, limit int, fn func(*RawRecord) error) (int, Position, error) {
	return s.scan(ctx, q, "", after, limit, fn)
}

// pgEpoch is the zero of PostgreSQL's binary timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func (s *Store) scan(ctx context.Context, q Querier, cond string, after Position, limit int, fn func(*RawRecord) error) (int, Position, error) {
	last := after
	rows, err := q.Query(ctx, `SELECT `+scanColumns+` FROM events
        WHERE (tx_id, position) > ($1::text::xid8, $2::bigint) `+cond+`
        ORDER BY events.tx_id, events.position
        LIMIT $3`, pgx.QueryResultFormats{pgx.BinaryFormatCode},
		strconv.FormatUint(after.TxID, 10), after.Pos, limit)
	if err != nil {
		return 0, last, fmt.Errorf("reading events after %s: %w", after, err)
	}
	defer rows.Close()
	var (
		r RawRecord
		n int
	)
	for rows.Next() {
		v := rows.RawValues()
		if len(v) != 9 || len(v[0]) != 8 || len(v[1]) != 8 || len(v[2]) != 16 || len(v[4]) != 8 || len(v[7]) != 8 {
			return n, last, fmt.Errorf("reading events after %s: unexpected row layout", after)
		}
		r.Position = Position{TxID: binary.BigEndian.Uint64(v[1]), Pos: int64(binary.BigEndian.Uint64(v[0]))}
		copy(r.ID[:], v[2])
		r.StreamID, r.Version = v[3], int64(binary.BigEndian.Uint64(v[4]))
		r.Type, r.Subject = v[5], v[6]
		r.OccurredAt = pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(v[7]))) * time.Microsecond).Local()
		r.Payload = v[8]
		if err := fn(&r); err != nil {
			return n, last, err
		}
		n++
		last = r.Position
	}
	if err := rows.Err(); err != nil {
		return n, last, fmt.Errorf("reading events after %s: %w", after, err)
	}
	return n, last, nil
}
