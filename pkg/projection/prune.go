package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of PruneOptions.
const (
	DefaultPruneInterval    = 5 * time.Minute
	DefaultAppliedRetention = time.Hour
	DefaultPruneBatch       = 10000
)

// PruneOptions tunes a Pruner.
type PruneOptions struct {
	// Interval is the time between two prunes (PROJECTION_PRUNE_INTERVAL); zero means
	// DefaultPruneInterval.
	Interval time.Duration
	// Retention is how long an applied event id is kept at least, even below the ack floor
	// (PROJECTION_APPLIED_RETENTION): the same event published again past JetStream's duplicate
	// window (a publisher's late retry) is a new message, above the floor, that only its id can
	// tell applied. Zero means DefaultAppliedRetention.
	Retention time.Duration
	// Batch is the most ids deleted by one statement (each its own short transaction, so that no
	// long one holds back the snapshot xmin of the relays: DESIGN §7); zero means
	// DefaultPruneBatch.
	Batch  int
	Logger *slog.Logger
}

// Pruner deletes the event ids a StreamRunner recorded in projection_applied once they can no
// longer come back (otherwise the table grows for ever). JetStream redelivers only the messages of
// a durable consumer above its ack floor, and a StreamRunner acknowledges a message only after
// committing its effect, so every id at or below the floor whose message is older than the
// retention is pruned, in batches. The projection's watermark on the stream (projection_watermarks)
// is first raised to the floor, so that even a consumer re-created from the start of the stream
// skips what was pruned, as it skips what a rebuild applied.
type Pruner struct {
	db         *pgxpool.Pool
	consumer   jetstream.Consumer
	projection string
	stream     string
	opts       PruneOptions
	log        *slog.Logger
}

// NewPruner returns a pruner of the ids projection recorded from the durable consumer (the one
// its StreamRunners read: a projection fed by several consumers needs a Pruner for each only
// when each has a projection name of its own, as every StreamRunner of the platform does).
func NewPruner(db *pgxpool.Pool, consumer jetstream.Consumer, projection string, o PruneOptions) (*Pruner, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultPruneInterval
	}
	if o.Retention <= 0 {
		o.Retention = DefaultAppliedRetention
	}
	if o.Batch <= 0 {
		o.Batch = DefaultPruneBatch
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	info := consumer.CachedInfo()
	if info == nil || info.Stream == "" {
		return nil, errors.New("projection: the consumer's stream is unknown")
	}
	return &Pruner{db: db, consumer: consumer, projection: projection, stream: info.Stream, opts: o,
		log: o.Logger.With("projection", projection)}, nil
}

// Run prunes every Interval until ctx ends; a failed prune is logged and tried again at the next.
func (p *Pruner) Run(ctx context.Context) error {
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := p.Prune(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("pruning applied event ids failed; retrying at the next interval", "err", err)
		case n > 0:
			p.log.Debug("pruned applied event ids", "count", n)
		}
	}
}

// pruneSQL deletes one batch of the ids at or below the floor that are older than the retention,
// found by the index on (projection, stream_seq).
const pruneSQL = `DELETE FROM projection_applied WHERE projection = $1 AND event_id IN (
    SELECT event_id FROM projection_applied
    WHERE projection = $1 AND stream_seq <= $2 AND applied_at < now() - make_interval(secs => $3)
    ORDER BY stream_seq LIMIT $4)`

// Prune deletes, in batches, the ids that can no longer come back, and returns how many.
func (p *Pruner) Prune(ctx context.Context) (int64, error) {
	info, err := p.consumer.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the ack floor of %s: %w", p.projection, err)
	}
	floor := info.AckFloor.Stream
	if floor == 0 {
		return 0, nil
	}
	if _, err := p.db.Exec(ctx, `INSERT INTO projection_watermarks (projection, stream, stream_seq) VALUES ($1, $2, $3)
        ON CONFLICT (projection, stream) DO UPDATE
        SET stream_seq = GREATEST(projection_watermarks.stream_seq, EXCLUDED.stream_seq), updated_at = now()`,
		p.projection, p.stream, int64(floor)); err != nil {
		return 0, fmt.Errorf("raising the watermark of %s: %w", p.projection, err)
	}
	var total int64
	for {
		tag, err := p.db.Exec(ctx, pruneSQL, p.projection, int64(floor), p.opts.Retention.Seconds(), p.opts.Batch)
		if err != nil {
			return total, fmt.Errorf("pruning the applied event ids of %s: %w", p.projection, err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(p.opts.Batch) || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}
