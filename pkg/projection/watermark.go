package projection

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A stream watermark says that a projection's tables hold every event of a JetStream stream up
// to a sequence: a rebuild's swap sets it to the sequence it read up to, and the StreamRunner
// skips the events at or below it as applied. It is kept in projection_applied as one row per
// projection and stream, under an event id derived from the stream's name (a name-based UUID,
// which no event id, random, can equal), with the sequence in stream_seq: no new table, so no
// migration to slot between the ones every service's schema has already applied.
var watermarkNamespace = uuid.MustParse("7b0b8f52-6a55-4d43-9f0e-8f6f2f4c1e21")

func watermarkID(stream string) uuid.UUID {
	return uuid.NewSHA1(watermarkNamespace, []byte("stream-watermark:"+stream))
}

// setWatermark sets the projection's watermark on stream to seq. It replaces the previous one
// rather than keeping the larger: a rebuild read the stream as it is now, so a stream that was
// deleted and created again (its sequences restarting from 1) gets a watermark of its own. (In
// between, the live consumer skips the new stream's first events up to the old watermark: a
// re-created stream needs its projections rebuilt, which applies them.)
func setWatermark(ctx context.Context, tx pgx.Tx, projection, stream string, seq uint64) error {
	_, err := tx.Exec(ctx, `INSERT INTO projection_applied (projection, event_id, stream_seq) VALUES ($1, $2, $3)
        ON CONFLICT (projection, event_id) DO UPDATE SET stream_seq = EXCLUDED.stream_seq, applied_at = now()`,
		projection, watermarkID(stream), int64(seq))
	if err != nil {
		return fmt.Errorf("recording the rebuilt stream position: %w", err)
	}
	return nil
}

// watermarkQuery reads the projection's watermark on a stream (no row: 0).
const watermarkQuery = `SELECT COALESCE(max(stream_seq), 0) FROM projection_applied WHERE projection = $1 AND event_id = $2`
