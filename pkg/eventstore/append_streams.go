package eventstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// StreamAppend is one stream's part of AppendStreamsTx: Events for StreamID, which must be at
// version Expected (AnyVersion, NoStream or a version) when they are appended.
type StreamAppend struct {
	StreamID string
	Expected int64
	Events   []Event
}

// appendStreamsSQL is AppendTx's statement for several streams: every stream's current version,
// then, if each is at its expected version, all the events with consecutive versions per
// stream, in the order given; one row per stream with its version before and its last event.
// When $13 is set it also lists the advisory locks this session holds (checked in Go).
const appendStreamsSQL = `
WITH e AS (
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::text[], $5::text[], $6::text[],
                         $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::bytea[])
         WITH ORDINALITY AS e(stream, expected, id, typ, subj, co, env, corr, caus, occ, payload, n)
), cur AS (
    SELECT s.stream, s.expected,
           coalesce((SELECT max(stream_version) FROM events WHERE stream_id = s.stream), 0) AS v
    FROM (SELECT DISTINCT stream, expected FROM e) s
), ins AS (
    INSERT INTO events (event_id, stream_id, stream_version, event_type, subject, company_id,
                        environment, correlation_id, causation_id, occurred_at, payload)
    SELECT e.id, e.stream, cur.v + row_number() OVER (PARTITION BY e.stream ORDER BY e.n),
           e.typ, e.subj, e.co, e.env, e.corr, e.caus, e.occ, e.payload
    FROM e JOIN cur ON cur.stream = e.stream
    WHERE NOT EXISTS (SELECT 1 FROM cur WHERE cur.expected >= 0 AND cur.v <> cur.expected)
    ORDER BY e.n
    RETURNING stream_id, stream_version, position, tx_id
), last AS (
    SELECT DISTINCT ON (stream_id) stream_id, stream_version, position, tx_id::text AS tx
    FROM ins ORDER BY stream_id, stream_version DESC
), held AS (
    SELECT array_agg(classid::bigint) AS hi, array_agg(objid::bigint) AS lo FROM pg_locks
    WHERE $12::bool AND locktype = 'advisory' AND granted AND pid = pg_backend_pid() AND objsubid = 1
)
SELECT cur.stream, cur.v, last.stream_version, last.position, last.tx, held.hi, held.lo
FROM cur LEFT JOIN last ON last.stream_id = cur.stream CROSS JOIN held`

// AppendStreamsTx is AppendTx for several streams at once, in one statement within the
// caller's transaction: a consumer that changes many aggregates in one batch appends all their
// events in one round trip instead of one per aggregate. Each stream's events get consecutive
// versions after its current one, and the events are recorded in the order given, stream after
// stream. Either every append happens or none does: a stream at another version than its
// Expected fails the call with a *ConcurrencyError naming it, and nothing is appended. As with
// AppendTx, appending to an existing stream needs its lock (LockStreams), and a failed append
// aborts the transaction. It returns each stream's result, in the order of apps.
func (s *Store) AppendStreamsTx(ctx context.Context, q Querier, apps []StreamAppend) ([]AppendResult, error) {
	if len(apps) == 0 {
		return nil, nil
	}
	n := 0
	seen := make(map[string]bool, len(apps))
	for _, a := range apps {
		if err := validateAppend(a.StreamID, a.Events); err != nil {
			return nil, err
		}
		if seen[a.StreamID] {
			return nil, fmt.Errorf("%w: stream %s given twice", ErrInvalidEvent, a.StreamID)
		}
		seen[a.StreamID] = true
		n += len(a.Events)
	}
	var (
		streams  = make([]string, 0, n)
		expected = make([]int64, 0, n)
		cols     = newColumns(n)
		locking  bool
	)
	for _, a := range apps {
		for _, e := range a.Events {
			streams, expected = append(streams, a.StreamID), append(expected, a.Expected)
			cols.add(e)
		}
		locking = locking || s.needsLock(q, a.Expected)
	}
	rows, err := q.Query(ctx, appendStreamsSQL, streams, expected, cols.ids, cols.types, cols.subjects,
		cols.companies, cols.envs, cols.corrs, cols.causes, cols.occurred, cols.payloads, locking)
	if err != nil {
		return nil, s.appendError(err, streamNames(apps), AnyVersion)
	}
	type outcome struct {
		current int64
		version *int64
		pos     *int64
		tx      *string
	}
	out := make(map[string]outcome, len(apps))
	var his, los []int64
	var (
		stream string
		o      outcome
	)
	_, err = pgx.ForEachRow(rows, []any{&stream, &o.current, &o.version, &o.pos, &o.tx, &his, &los}, func() error {
		out[stream] = o
		return nil
	})
	if err != nil {
		return nil, s.appendError(err, streamNames(apps), AnyVersion)
	}
	held := make(map[[2]int64]bool, len(his))
	for i := range his {
		held[[2]int64{his[i], los[i]}] = true
	}
	results := make([]AppendResult, len(apps))
	for i, a := range apps {
		if s.needsLock(q, a.Expected) {
			if hi, lo := lockKeyParts(a.StreamID); !held[[2]int64{hi, lo}] {
				return nil, fmt.Errorf("%w %s (take it with LockStreams first)", ErrStreamNotLocked, a.StreamID)
			}
		}
		o := out[a.StreamID]
		if o.version == nil {
			// Nothing was appended: the first stream not at its expected version is why.
			for _, b := range apps {
				if c := out[b.StreamID].current; b.Expected >= 0 && c != b.Expected {
					return nil, &ConcurrencyError{StreamID: b.StreamID, Expected: b.Expected, Actual: c}
				}
			}
			return nil, fmt.Errorf("appending to %s: no event recorded", a.StreamID)
		}
		txID, err := strconv.ParseUint(*o.tx, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reading transaction id %q: %w", *o.tx, err)
		}
		results[i] = AppendResult{Version: *o.version, Last: Position{TxID: txID, Pos: *o.pos}}
	}
	return results, nil
}

// streamNames names the streams of apps in an error: the first few and how many.
func streamNames(apps []StreamAppend) string {
	const shown = 3
	names := make([]string, 0, shown)
	for _, a := range apps[:min(shown, len(apps))] {
		names = append(names, a.StreamID)
	}
	if len(apps) > shown {
		return fmt.Sprintf("%s and %d other streams", strings.Join(names, ", "), len(apps)-shown)
	}
	return strings.Join(names, ", ")
}
