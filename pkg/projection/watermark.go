package projection

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A stream watermark says that a projection's tables hold every event of a JetStream stream up
// to a sequence: a rebuild's swap sets it to the sequence it read up to, and the StreamRunner
// skips the events at or below it as applied. One row per projection and stream in
// projection_watermarks: the swap records one number instead of every rebuilt event id.

// setWatermark sets the projection's watermark on stream to seq. It replaces the previous one
// rather than keeping the larger: a rebuild read the stream as it is now, so a stream that was
// deleted and created again (its sequences restarting from 1) gets a watermark of its own. (In
// between, the live consumer skips the new stream's first events up to the old watermark: a
// re-created stream needs its projections rebuilt, which applies them.)
func setWatermark(ctx context.Context, tx pgx.Tx, projection, stream string, seq uint64) error {
	_, err := tx.Exec(ctx, `INSERT INTO projection_watermarks (projection, stream, stream_seq) VALUES ($1, $2, $3)
        ON CONFLICT (projection, stream) DO UPDATE SET stream_seq = EXCLUDED.stream_seq, updated_at = now()`,
		projection, stream, int64(seq))
	if err != nil {
		return fmt.Errorf("recording the rebuilt stream position: %w", err)
	}
	return nil
}

// watermarkQuery reads the projection's watermark on a stream (no row: 0).
const watermarkQuery = `SELECT COALESCE(max(stream_seq), 0) FROM projection_watermarks WHERE projection = $1 AND stream = $2`
