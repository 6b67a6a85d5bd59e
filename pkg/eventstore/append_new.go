package eventstore

import (
	"context"
	"fmt"
	"strconv"
)

// appendNewSQL inserts the first events of a stream with versions 1..n. On a stream that has
// events, version 1 is taken and the unique (stream_id, stream_version) constraint fails the
// statement.
const appendNewSQL = `
WITH ins AS (
    INSERT INTO events (event_id, stream_id, stream_version, event_type, subject, company_id,
                        environment, correlation_id, causation_id, occurred_at, payload)
    SELECT e.id, $1, e.n, e.typ, e.subj, e.co, e.env, e.corr, e.caus, e.occ, e.payload
    FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                $8::text[], $9::timestamptz[], $10::bytea[])
         WITH ORDINALITY AS e(id, typ, subj, co, env, corr, caus, occ, payload, n)
    ORDER BY e.n
    RETURNING stream_version, position, tx_id
)
SELECT stream_version, position, tx_id::text FROM ins ORDER BY stream_version DESC LIMIT 1`

// AppendNewTx appends the first events of a stream that must not exist yet, within the
// caller's transaction (q). Unlike AppendTx with NoStream, which tells of an existing stream
// without a database error, it fails in the database (a unique violation, returned as a
// *ConcurrencyError with Actual -1): every failure aborts the transaction, so a caller may
// send its COMMIT in the same round trip as the append (a pipeline) without committing a
// transaction whose append did not happen. A new stream needs no lock (LockStreams).
func (s *Store) AppendNewTx(ctx context.Context, q Querier, streamID string, evs ...Event) (AppendResult, error) {
	if err := validateAppend(streamID, evs); err != nil {
		return AppendResult{}, err
	}
	cols := newColumns(len(evs))
	for _, e := range evs {
		cols.add(e)
	}
	var (
		version, pos int64
		tx           string
	)
	err := q.QueryRow(ctx, appendNewSQL, streamID, cols.ids, cols.types, cols.subjects, cols.companies, cols.envs,
		cols.corrs, cols.causes, cols.occurred, cols.payloads).Scan(&version, &pos, &tx)
	if err != nil {
		return AppendResult{}, s.appendError(err, streamID, NoStream)
	}
	txID, err := strconv.ParseUint(tx, 10, 64)
	if err != nil {
		return AppendResult{}, fmt.Errorf("reading transaction id %q: %w", tx, err)
	}
	return AppendResult{Version: version, Last: Position{TxID: txID, Pos: pos}}, nil
}
