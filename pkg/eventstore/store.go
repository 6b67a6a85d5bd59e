package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Querier is what the store needs to run a statement: a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Store is the event store in the schema on its pool's search_path.
//
// Appends do not NOTIFY: PostgreSQL serialises the commits of every transaction that
// notifies, so concurrent appends would wait for each other (docs/BENCHMARKS.md). Tailers poll.
type Store struct {
	db *pgxpool.Pool
}

// New returns the store on db.
func New(db *pgxpool.Pool) *Store { return &Store{db: db} }

// DB returns the store's pool.
func (s *Store) DB() *pgxpool.Pool { return s.db }

// copyThreshold is the batch size from which an append uses COPY instead of one INSERT.
const copyThreshold = 64

// The whole append of a small batch is one statement: the stream's current version and the
// guarded insert with consecutive versions.
var appendSQL = `
WITH cur AS (
    SELECT coalesce(max(stream_version), 0) AS v FROM events WHERE stream_id = $1
), ins AS (
    INSERT INTO events (event_id, stream_id, stream_version, event_type, subject, company_id,
                        environment, correlation_id, causation_id, occurred_at, payload)
    SELECT e.id, $1, cur.v + e.n, e.typ, e.subj, e.co, e.env, e.corr, e.caus, e.occ, e.payload
    FROM cur, unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                     $9::text[], $10::timestamptz[], $11::bytea[])
         WITH ORDINALITY AS e(id, typ, subj, co, env, corr, caus, occ, payload, n)
    WHERE $2::bigint < 0 OR cur.v = $2::bigint
    ORDER BY e.n
    RETURNING stream_version, position, tx_id
), last AS (
    SELECT stream_version, position, tx_id::text AS tx FROM ins ORDER BY stream_version DESC LIMIT 1
)
SELECT (SELECT v FROM cur), last.stream_version, last.position, last.tx,
       NOT $12::bool OR ` + fmt.Sprintf(streamLockHeldSQL, "$13::bigint", "$14::bigint") + `
FROM (SELECT 1) one LEFT JOIN last ON true`

// Append appends events to a stream that must be at version expected (or AnyVersion), in a
// transaction of its own.
func (s *Store) Append(ctx context.Context, streamID string, expected int64, evs ...Event) (AppendResult, error) {
	return s.AppendTx(ctx, s.db, streamID, expected, evs...)
}

// AppendTx appends within the caller's transaction, so the caller can change its own tables
// (uniqueness reservations, read-your-writes read tables) atomically with the events. A
// failed append aborts the transaction. To append to an existing stream the transaction must
// hold the stream's lock, taken with LockStreams before its first write (ErrStreamNotLocked
// otherwise).
func (s *Store) AppendTx(ctx context.Context, q Querier, streamID string, expected int64, evs ...Event) (AppendResult, error) {
	if err := validateAppend(streamID, evs); err != nil {
		return AppendResult{}, err
	}
	if len(evs) >= copyThreshold {
		return s.appendCopy(ctx, q, streamID, expected, evs)
	}
	cols := newColumns(len(evs))
	for _, e := range evs {
		cols.add(e)
	}
	var (
		current int64
		version *int64
		pos     *int64
		tx      *string
		locked  bool
	)
	hi, lo := lockKeyParts(streamID)
	err := q.QueryRow(ctx, appendSQL, streamID, expected, cols.ids, cols.types, cols.subjects,
		cols.companies, cols.envs, cols.corrs, cols.causes, cols.occurred, cols.payloads,
		s.needsLock(q, expected), hi, lo,
	).Scan(&current, &version, &pos, &tx, &locked)
	if err != nil {
		return AppendResult{}, s.appendError(err, streamID, expected)
	}
	if !locked {
		return AppendResult{}, fmt.Errorf("%w %s (take it with LockStreams first)", ErrStreamNotLocked, streamID)
	}
	if version == nil {
		return AppendResult{}, &ConcurrencyError{StreamID: streamID, Expected: expected, Actual: current}
	}
	txID, err := strconv.ParseUint(*tx, 10, 64)
	if err != nil {
		return AppendResult{}, fmt.Errorf("reading transaction id %q: %w", *tx, err)
	}
	return AppendResult{Version: *version, Last: Position{TxID: txID, Pos: *pos}}, nil
}

// validateAppend refuses an append without a stream id, without events, or with an invalid
// event (ErrInvalidEvent).
func validateAppend(streamID string, evs []Event) error {
	if streamID == "" {
		return fmt.Errorf("%w: stream id missing", ErrInvalidEvent)
	}
	if len(evs) == 0 {
		return fmt.Errorf("%w: nothing to append to %s", ErrInvalidEvent, streamID)
	}
	for _, e := range evs {
		if err := e.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) appendError(err error, streamID string, expected int64) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		switch pe.ConstraintName {
		case "events_stream_version_key":
			// A concurrent append took the version first.
			return &ConcurrencyError{StreamID: streamID, Expected: expected, Actual: -1}
		case "events_event_id_key":
			return fmt.Errorf("stream %s: %w", streamID, ErrDuplicateEvent)
		}
	}
	return fmt.Errorf("appending to %s: %w", streamID, err)
}

// columns are the append's parameters, one array per column. Event ids go as pgtype.UUID: pgx
// encodes a uuid.UUID through its driver.Valuer, as text that it fails to encode in binary and
// parses back, several times the work of the binary form.
type columns struct {
	ids                                             []pgtype.UUID
	types, subjects, companies, envs, corrs, causes []string
	occurred                                        []time.Time
	payloads                                        [][]byte
}

func newColumns(n int) *columns {
	return &columns{
		ids: make([]pgtype.UUID, 0, n), types: make([]string, 0, n), subjects: make([]string, 0, n),
		companies: make([]string, 0, n), envs: make([]string, 0, n), corrs: make([]string, 0, n),
		causes: make([]string, 0, n), occurred: make([]time.Time, 0, n), payloads: make([][]byte, 0, n),
	}
}

func (c *columns) add(e Event) {
	c.ids = append(c.ids, pgtype.UUID{Bytes: e.ID, Valid: true})
	c.types = append(c.types, e.Type)
	c.subjects = append(c.subjects, e.Subject)
	c.companies = append(c.companies, e.CompanyID)
	c.envs = append(c.envs, e.Environment)
	c.corrs = append(c.corrs, e.CorrelationID)
	c.causes = append(c.causes, e.CausationID)
	c.occurred = append(c.occurred, e.OccurredAt)
	c.payloads = append(c.payloads, e.Payload)
}

// Output columns are aliased so that ORDER BY tx_id means the xid8 column, never its text
// rendering (a text sort puts "100000" before "99666").
const selectColumns = `position, tx_id::text AS tx_text, event_id, stream_id, stream_version, event_type,
    subject, company_id, environment, correlation_id, causation_id, occurred_at, recorded_at, payload`

// Version returns the current version of a stream (0 when it has no event).
func (s *Store) Version(ctx context.Context, q Querier, streamID string) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = $1`, streamID).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("reading version of %s: %w", streamID, err)
	}
	return v, nil
}

// ReadStream returns the events of a stream after version `after`, in version order.
func (s *Store) ReadStream(ctx context.Context, q Querier, streamID string, after int64) ([]Recorded, error) {
	rows, err := q.Query(ctx, `SELECT `+selectColumns+` FROM events
        WHERE stream_id = $1 AND stream_version > $2 ORDER BY stream_version`, streamID, after)
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", streamID, err)
	}
	return scanRecorded(rows)
}

// ReadAll returns up to limit events after `after` in gap-safe global order: (tx_id,
// position), and only events of transactions older than every transaction still in progress.
func (s *Store) ReadAll(ctx context.Context, q Querier, after Position, limit int) ([]Recorded, error) {
	rows, err := q.Query(ctx, `SELECT `+selectColumns+` FROM events
        WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
          AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY events.tx_id, events.position
        LIMIT $3`, strconv.FormatUint(after.TxID, 10), after.Pos, limit)
	if err != nil {
		return nil, fmt.Errorf("reading events after %s: %w", after, err)
	}
	return scanRecorded(rows)
}

// ReadVisible reads up to limit events after the position in (transaction id, position) order,
// like ReadAll, but everything q's snapshot sees, without holding back below the oldest
// transaction in flight. It is gap-safe only where no event can commit later behind what it
// returns: for example inside a transaction that has locked out every appender, such as the
// final catch-up of a projection rebuild.
func (s *Store) ReadVisible(ctx context.Context, q Querier, after Position, limit int) ([]Recorded, error) {
	rows, err := q.Query(ctx, `SELECT `+selectColumns+` FROM events
        WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
        ORDER BY events.tx_id, events.position
        LIMIT $3`, strconv.FormatUint(after.TxID, 10), after.Pos, limit)
	if err != nil {
		return nil, fmt.Errorf("reading events after %s: %w", after, err)
	}
	return scanRecorded(rows)
}

// Count returns the number of events in the store.
func (s *Store) Count(ctx context.Context, q Querier) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n)
	return n, err
}

// Head returns the position of the last event a gap-safe reader can see now (the zero
// Position when there is none).
func (s *Store) Head(ctx context.Context, q Querier) (Position, error) {
	return s.last(ctx, q, `WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())`)
}

// LastCommitted returns the position of the last event committed now, which a gap-safe
// reader may see only once older transactions still in flight have finished. A reader that
// has passed it has read everything committed before the call.
func (s *Store) LastCommitted(ctx context.Context, q Querier) (Position, error) {
	return s.last(ctx, q, "")
}

func (s *Store) last(ctx context.Context, q Querier, where string) (Position, error) {
	var (
		tx  *string
		pos *int64
	)
	err := q.QueryRow(ctx, `SELECT tx_id::text AS tx_text, position FROM events `+where+`
        ORDER BY events.tx_id DESC, events.position DESC LIMIT 1`).Scan(&tx, &pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return Position{}, nil
	}
	if err != nil {
		return Position{}, fmt.Errorf("reading head: %w", err)
	}
	id, err := strconv.ParseUint(*tx, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("reading transaction id %q: %w", *tx, err)
	}
	return Position{TxID: id, Pos: *pos}, nil
}

func scanRecorded(rows pgx.Rows) ([]Recorded, error) {
	defer rows.Close()
	var out []Recorded
	for rows.Next() {
		var (
			r  Recorded
			tx string
			// A pgtype.UUID scans the binary value as it is; a uuid.UUID (an sql.Scanner)
			// would go through its text form, a fifth of a rebuild's reading.
			eventID pgtype.UUID
		)
		if err := rows.Scan(&r.Position.Pos, &tx, &eventID, &r.StreamID, &r.Version, &r.Type, &r.Subject,
			&r.CompanyID, &r.Environment, &r.CorrelationID, &r.CausationID, &r.OccurredAt,
			&r.RecordedAt, &r.Payload); err != nil {
			return nil, fmt.Errorf("scanning event: %w", err)
		}
		id, err := strconv.ParseUint(tx, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reading transaction id %q: %w", tx, err)
		}
		r.Position.TxID = id
		r.ID = eventID.Bytes
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	return out, nil
}
