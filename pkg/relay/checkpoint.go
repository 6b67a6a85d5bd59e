package relay

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
)

// Checkpoint is how far the stream is known to hold the store's events.
type Checkpoint struct {
	Position  eventstore.Position
	StreamSeq uint64
}

// errCheckpointMoved reports a checkpoint write refused: another relay moved the checkpoint, or
// took the lease over (its token is newer than the writer's).
var errCheckpointMoved = errors.New("relay checkpoint moved under us, or fenced by a newer lease")

func loadCheckpoint(ctx context.Context, q eventstore.Querier, name string) (Checkpoint, error) {
	var (
		tx  string
		pos int64
		seq int64
	)
	err := q.QueryRow(ctx, `SELECT tx_id::text, position, stream_seq FROM relay_checkpoints WHERE name = $1`, name).Scan(&tx, &pos, &seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return Checkpoint{}, nil
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("loading relay checkpoint: %w", err)
	}
	id, err := strconv.ParseUint(tx, 10, 64)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("relay checkpoint transaction id %q: %w", tx, err)
	}
	return Checkpoint{Position: eventstore.Position{TxID: id, Pos: pos}, StreamSeq: uint64(seq)}, nil
}

// saveCheckpoint moves the checkpoint from old to next for the holder of lease token, failing
// with errCheckpointMoved when another relay changed it meanwhile or holds a newer lease: the
// row lock orders this write and a takeover (which writes its token into the row), so a
// leader that lost its lease can never move the checkpoint, backwards or forwards.
func saveCheckpoint(ctx context.Context, q eventstore.Querier, name string, token int64, old, next Checkpoint) error {
	tag, err := q.Exec(ctx, `
        INSERT INTO relay_checkpoints AS c (name, tx_id, position, stream_seq, lease_token, updated_at)
        VALUES ($1, $2::text::xid8, $3, $4, $7, now())
        ON CONFLICT (name) DO UPDATE
           SET tx_id = excluded.tx_id, position = excluded.position,
               stream_seq = excluded.stream_seq, updated_at = now()
         WHERE c.tx_id = $5::text::xid8 AND c.position = $6 AND c.lease_token = $7`,
		name, strconv.FormatUint(next.Position.TxID, 10), next.Position.Pos, int64(next.StreamSeq),
		strconv.FormatUint(old.Position.TxID, 10), old.Position.Pos, token)
	if err != nil {
		return fmt.Errorf("saving relay checkpoint: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return errCheckpointMoved
	}
	return nil
}
