package projection

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Definition describes a projection that operators can rebuild blue/green and verify: its
// read tables, the schema they live in, and where its events come from. The projector's SQL
// must name its tables without a schema (they resolve through search_path), so that the same
// code writes the live tables in production and the shadow tables during a rebuild.
type Definition struct {
	Projector Projector
	// Schema holds the live read tables (and, for store-fed projections, the event store).
	Schema string
	// Tables are the read tables the projector writes, unqualified; they are rebuilt and
	// swapped together.
	Tables []string
	// Source delivers the projection's events from the start.
	Source Source
}

// Name is the projection's name (its projector's).
func (d Definition) Name() string { return d.Projector.Name() }

// Source is where a projection's events come from: an event store or a JetStream stream.
type Source interface {
	// Count returns how many events the source holds now (for --dry-run and progress).
	Count(ctx context.Context) (int64, error)
	// Open starts reading from the first event.
	Open(ctx context.Context) (SourceReader, error)
}

// SourceReader reads a source once, from the first event.
type SourceReader interface {
	// Next returns the next batch of at most max events, or none once it has reached what the
	// source held when the reader was opened (or later).
	Next(ctx context.Context, max int) ([]Event, error)
	// Lock runs first in the swap transaction, before the live tables are locked: what the
	// live writers lock before the read tables is locked here, in their order, so that the
	// swap never deadlocks with them (a stream source takes projection_applied, where the
	// live consumer records an event before applying it). What writers lock after the read
	// tables (an event store they append to) is locked by Finish.
	Lock(ctx context.Context, tx pgx.Tx) error
	// Finish runs inside the swap transaction, once the live tables are locked against the
	// live writers: it locks out whatever else could commit events behind what it reads,
	// passes every event after those Next returned to apply, in order, and
	// records in tx what the live writer needs in order not to apply them a second time. The
	// swap transaction may be rolled back (a deadlock with a live writer) and Finish called
	// again: it must then deliver the same events again, and more.
	Finish(ctx context.Context, tx pgx.Tx, projection string, apply func([]Event) error) error
	Close()
}

// Progress is called once with 0 events when the rebuild starts, then after each applied
// batch with the events applied so far, and the source's count when the rebuild started.
type Progress func(done, total int64)

// RebuildOptions tunes Rebuild and Verify.
type RebuildOptions struct {
	BatchSize int
	Progress  Progress
	// IndexBuilders is how many indexes are built at the same time after the load, each on
	// its own connection and (in PostgreSQL) its own core; 0 means defaultIndexBuilders.
	IndexBuilders int
}

// ErrRebuildRunning is returned when another rebuild or verify of the same projection holds
// its lock.
var ErrRebuildRunning = errors.New("a rebuild of this projection is already running")

// RebuildResult says what a rebuild did.
type RebuildResult struct {
	Events  int64
	Skipped int64
	Elapsed time.Duration
}

// Diff is a row present on one side only: in the live table ("live") or in a fresh build
// ("rebuilt").
type Diff struct {
	Table string
	Side  string
	Row   string
}

// Rebuild rebuilds d's tables from its source while the system keeps serving: it builds
// shadow copies in a separate schema in short batches, then, in one transaction that locks
// the live tables against writers (readers keep reading the old tables until the commit),
// applies the events that arrived meanwhile, drops the live tables and moves the shadow ones
// in their place. No reader ever sees a half-built table. Only tables are written: no event is
// published and no webhook is sent again.
func Rebuild(ctx context.Context, db *pgxpool.Pool, d Definition, o RebuildOptions) (RebuildResult, error) {
	return build(ctx, db, d, o, d.Schema+"_rebuild", func(ctx context.Context, tx pgx.Tx, shadow string) error {
		return swap(ctx, tx, d, shadow)
	})
}

// Verify builds d's tables from its source into a scratch schema, exactly as Rebuild would,
// and returns the rows that differ from the live tables (compared at one instant, under the
// same lock as a swap); the live tables are not changed.
func Verify(ctx context.Context, db *pgxpool.Pool, d Definition, o RebuildOptions) ([]Diff, RebuildResult, error) {
	var diffs []Diff
	res, err := build(ctx, db, d, o, d.Schema+"_verify", func(ctx context.Context, tx pgx.Tx, scratch string) error {
		var err error
		diffs, err = diff(ctx, tx, d, scratch)
		if err != nil {
			return err
		}
		return errVerifyDone // roll back: verify must leave the live side as it was
	})
	return diffs, res, err
}

var errVerifyDone = errors.New("verify done")

// maxSwapAttempts bounds the retries of a swap that lost a deadlock to a live writer.
const maxSwapAttempts = 5

func build(ctx context.Context, db *pgxpool.Pool, d Definition, o RebuildOptions, prefix string,
	finish func(ctx context.Context, tx pgx.Tx, shadow string) error) (RebuildResult, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = defaultBatchSize
	}
	start := time.Now()
	lock, err := db.Acquire(ctx)
	if err != nil {
		return RebuildResult{}, err
	}
	defer lock.Release()
	var got bool
	if err := lock.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, rebuildLockKey(d.Name())).Scan(&got); err != nil {
		return RebuildResult{}, err
	}
	if !got {
		return RebuildResult{}, fmt.Errorf("%s: %w", d.Name(), ErrRebuildRunning)
	}
	defer func() {
		_, _ = lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, rebuildLockKey(d.Name()))
	}()

	shadow := pgx.Identifier{prefix + "_" + sanitize(d.Name())}.Sanitize()
	shadowName := prefix + "_" + sanitize(d.Name())
	bp, bulk := d.Projector.(BulkProjector)
	deferred, err := createShadow(ctx, db, d, shadow, bulk)
	if err != nil {
		return RebuildResult{}, err
	}
	defer func() {
		_, _ = db.Exec(context.WithoutCancel(ctx), `DROP SCHEMA IF EXISTS `+shadow+` CASCADE`)
	}()

	total, err := d.Source.Count(ctx)
	if err != nil {
		return RebuildResult{}, fmt.Errorf("counting the events of %s: %w", d.Name(), err)
	}
	if o.Progress != nil {
		o.Progress(0, total) // the start: a rate shown by the caller counts from here
	}
	reader, err := d.Source.Open(ctx)
	if err != nil {
		return RebuildResult{}, err
	}
	defer reader.Close()
	b := &builder{db: db, d: d, o: o, total: total, searchPath: shadow + ", " + pgx.Identifier{d.Schema}.Sanitize()}
	load := b.apply
	var loader BulkLoader
	if bulk {
		loader = bp.NewLoader()
		load = func(ctx context.Context, tx pgx.Tx, evs []Event) error {
			return b.applyWith(ctx, tx, evs, loader.Load)
		}
	}
	if err := b.load(ctx, reader, load); err != nil {
		return b.res, err
	}
	if err := b.index(ctx, loader, deferred); err != nil {
		return b.res, err
	}
	// Catch up outside the swap's lock with what arrived during the load and the indexing
	// (a store source keeps reading; a stream source stops at what it held when opened).
	if err := b.load(ctx, reader, b.apply); err != nil {
		return b.res, err
	}
	for attempt := 1; ; attempt++ {
		before := b.res
		err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
			if err := reader.Lock(ctx, tx); err != nil {
				return err
			}
			if err := lockLive(ctx, tx, d); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+b.searchPath); err != nil {
				return err
			}
			if err := reader.Finish(ctx, tx, d.Name(), func(evs []Event) error { return b.apply(ctx, tx, evs) }); err != nil {
				return err
			}
			return finish(ctx, tx, shadowName)
		})
		if errors.Is(err, errVerifyDone) {
			err = nil
		}
		if isDeadlock(err) && attempt < maxSwapAttempts {
			b.res = before
			continue
		}
		if err != nil {
			return b.res, fmt.Errorf("finishing the rebuild of %s: %w", d.Name(), err)
		}
		break
	}
	if o.Progress != nil {
		o.Progress(b.res.Events+b.res.Skipped, max(total, b.res.Events+b.res.Skipped))
	}
	b.res.Elapsed = time.Since(start)
	return b.res, nil
}

func rebuildLockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("payplat-projection-rebuild:" + name))
	return int64(h.Sum64())
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteRune('_')
		}
	}
	return b.String()
}

func isDeadlock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}
