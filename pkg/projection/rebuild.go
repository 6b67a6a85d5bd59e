package projection

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
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

// defaultBatchSize is the number of events a rebuild applies per transaction.
const defaultBatchSize = 10000

// builder fills a projection's shadow tables.
type builder struct {
	db         *pgxpool.Pool
	d          Definition
	o          RebuildOptions
	total      int64
	searchPath string
	res        RebuildResult
}

// apply applies evs through the projector, skipping those it refuses as permanent.
func (b *builder) apply(ctx context.Context, tx pgx.Tx, evs []Event) error {
	return b.applyWith(ctx, tx, evs, func(ctx context.Context, tx pgx.Tx, evs []Event) error {
		return applyAll(ctx, tx, b.d.Projector, evs)
	})
}

func (b *builder) applyWith(ctx context.Context, tx pgx.Tx, evs []Event, fn applyFunc) error {
	skipped, err := applySkippingPermanent(ctx, tx, fn, evs)
	b.res.Events += int64(len(evs)) - skipped
	b.res.Skipped += skipped
	return err
}

type applyFunc func(ctx context.Context, tx pgx.Tx, evs []Event) error

// load applies the reader's batches until it has none left, one transaction each, while the
// next batch is read and decoded in the background.
//
// The batches commit with synchronous_commit off: they write only the shadow tables, which
// are worthless until the swap commits, and the swap commits synchronously. WAL is flushed in
// order, so once the swap's commit record is on disk every batch before it is too; a crash
// before that loses nothing that matters (the next rebuild drops the shadow schema and starts
// over). Not waiting for a WAL flush per batch saves a disk round trip each time.
func (b *builder) load(ctx context.Context, reader SourceReader, apply applyFunc) error {
	type batch struct {
		evs []Event
		err error
	}
	rctx, cancel := context.WithCancel(ctx)
	batches := make(chan batch, 1)
	go func() {
		defer close(batches)
		for {
			evs, err := reader.Next(rctx, b.o.BatchSize)
			if err == nil && len(evs) == 0 {
				return
			}
			select {
			case batches <- batch{evs, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// The reader is used again after load returns: wait for the goroutine to be done with it.
	defer func() {
		cancel()
		for range batches {
		}
	}()
	for next := range batches {
		if next.err != nil {
			return next.err
		}
		err := pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true), set_config('synchronous_commit', 'off', true)`,
				b.searchPath); err != nil {
				return err
			}
			return apply(ctx, tx, next.evs)
		})
		if err != nil {
			return fmt.Errorf("applying a batch of %s: %w", b.d.Name(), err)
		}
		if b.o.Progress != nil {
			b.o.Progress(b.res.Events+b.res.Skipped, b.total)
		}
	}
	return nil
}

// index lets a bulk loader write what it holds, then builds the indexes left out of the shadow
// tables during the load (which also records the tables' sizes for the planner). Index builds
// run side by side, IndexBuilders at a time, each on its own connection and without parallel
// workers of its own (an index build sorts on one core, and CREATE INDEX takes a lock that
// other index builds of the same table share);
// the indexes behind primary keys and unique constraints then become those constraints in one
// short transaction.
func (b *builder) index(ctx context.Context, loader BulkLoader, deferred []shadowIndex) error {
	if loader != nil {
		err := pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true), set_config('synchronous_commit', 'off', true)`,
				b.searchPath); err != nil {
				return err
			}
			return loader.Finish(ctx, tx)
		})
		if err != nil {
			return fmt.Errorf("writing the rebuilt tables of %s: %w", b.d.Name(), err)
		}
	}
	if len(deferred) == 0 {
		return nil
	}
	// The builds with their own lock of the whole table (an exclusion or deferrable
	// constraint's ALTER TABLE) run one after the other on one builder.
	var (
		alone  []shadowIndex
		shared = make(chan shadowIndex, len(deferred))
	)
	for _, ix := range deferred {
		if ix.wholeTable {
			alone = append(alone, ix)
		} else {
			shared <- ix
		}
	}
	close(shared)
	indexBuilders := b.o.IndexBuilders
	if indexBuilders <= 0 {
		indexBuilders = defaultIndexBuilders
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, indexBuilders)
	var wg sync.WaitGroup
	for w := range indexBuilders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []shadowIndex
			if w == 0 {
				mine = alone
			}
			// One transaction per index, so that a build holds its table's lock no longer
			// than it runs.
			build := func(ix shadowIndex) error {
				return pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true), set_config('synchronous_commit', 'off', true),
                        set_config('maintenance_work_mem', '256MB', true), set_config('max_parallel_maintenance_workers', '0', true)`,
						b.searchPath); err != nil {
						return err
					}
					return buildIndex(ctx, tx, ix)
				})
			}
			for _, ix := range mine {
				if errs[w] = build(ix); errs[w] != nil {
					break
				}
			}
			for ix := range shared {
				if errs[w] != nil {
					break
				}
				errs[w] = build(ix)
			}
			if errs[w] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("indexing the rebuilt tables of %s: %w", b.d.Name(), err)
	}
	err := pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true), set_config('synchronous_commit', 'off', true)`,
			b.searchPath); err != nil {
			return err
		}
		return attachIndexes(ctx, tx, deferred)
	})
	if err != nil {
		return fmt.Errorf("indexing the rebuilt tables of %s: %w", b.d.Name(), err)
	}
	return nil
}

// defaultIndexBuilders is the number of index builds a rebuild runs at the same time unless
// told otherwise: two, the smallest number of cores a database server has here.
const defaultIndexBuilders = 2

// applySkippingPermanent applies evs; events the projector refuses as permanent (the live
// consumer dead-lettered them) are skipped one by one under savepoints. It returns how many
// were skipped.
func applySkippingPermanent(ctx context.Context, tx pgx.Tx, apply applyFunc, evs []Event) (int64, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return 0, err
	}
	err = apply(ctx, sp, evs)
	if err == nil {
		return 0, sp.Commit(ctx)
	}
	_ = sp.Rollback(ctx)
	if !errors.Is(err, ErrPermanent) {
		return 0, err
	}
	var skipped int64
	for i := range evs {
		sp, err := tx.Begin(ctx)
		if err != nil {
			return skipped, err
		}
		err = apply(ctx, sp, evs[i:i+1])
		switch {
		case err == nil:
			if err := sp.Commit(ctx); err != nil {
				return skipped, err
			}
		case errors.Is(err, ErrPermanent):
			_ = sp.Rollback(ctx)
			skipped++
		default:
			_ = sp.Rollback(ctx)
			return skipped, err
		}
	}
	return skipped, nil
}

// lockLive takes the live tables in EXCLUSIVE mode: readers go on reading them, writers wait
// (and, once the swap commits, find the new tables under the same names).
func lockLive(ctx context.Context, tx pgx.Tx, d Definition) error {
	names := make([]string, len(d.Tables))
	for i, t := range d.Tables {
		names[i] = pgx.Identifier{d.Schema, t}.Sanitize()
	}
	_, err := tx.Exec(ctx, `LOCK TABLE `+strings.Join(names, ", ")+` IN EXCLUSIVE MODE`)
	return err
}

// swap replaces the live tables by the shadow ones: foreign keys between the live tables and
// from other tables are re-created on the new tables, owned sequences are handed over, the
// old tables are dropped, and the new ones' extended statistics join them in the live schema.
func swap(ctx context.Context, tx pgx.Tx, d Definition, shadow string) error {
	type fk struct{ table, name, def string }
	var fks []fk
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+pgx.Identifier{d.Schema}.Sanitize()); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
        FROM pg_constraint c
        WHERE c.contype = 'f' AND (c.confrelid = ANY($1::regclass[]) OR c.conrelid = ANY($1::regclass[]))`,
		qualified(d))
	if err != nil {
		return err
	}
	for rows.Next() {
		var f fk
		if err := rows.Scan(&f.table, &f.name, &f.def); err != nil {
			rows.Close()
			return err
		}
		fks = append(fks, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	sh := pgx.Identifier{shadow}.Sanitize()
	// The new tables get the live ones' owner and grants (the service's role, the readers'
	// SELECT) first: the rebuild may run as the operator, default privileges of the live schema
	// do not apply to tables created in the shadow one, and a sequence can only be owned by a
	// column of a table with its owner.
	for _, t := range d.Tables {
		stmts, err := accessOf(ctx, tx, pgx.Identifier{d.Schema, t}.Sanitize(), sh+`.`+pgx.Identifier{t}.Sanitize())
		if err != nil {
			return err
		}
		for _, stmt := range stmts {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("giving the rebuilt %s the live table's owner and grants: %w", t, err)
			}
		}
	}
	// Sequences owned by a live column are let go before the drop (or it would drop them) and
	// owned by the same column of the new table once it is in the live schema (a sequence and
	// its owning table share a schema).
	type ownedSeq struct{ seq, table, col string }
	var owned []ownedSeq
	for _, t := range d.Tables {
		rows, err := tx.Query(ctx, `SELECT s.oid::regclass::text, a.attname
            FROM pg_depend dep
            JOIN pg_class s ON s.oid = dep.objid AND s.relkind = 'S'
            JOIN pg_attribute a ON a.attrelid = dep.refobjid AND a.attnum = dep.refobjsubid
            WHERE dep.refobjid = $1::regclass AND dep.deptype = 'a'`, pgx.Identifier{d.Schema, t}.Sanitize())
		if err != nil {
			return err
		}
		var seqs [][2]string
		for rows.Next() {
			var seq, col string
			if err := rows.Scan(&seq, &col); err != nil {
				rows.Close()
				return err
			}
			seqs = append(seqs, [2]string{seq, col})
		}
		rows.Close()
		for _, s := range seqs {
			if _, err := tx.Exec(ctx, `ALTER SEQUENCE `+s[0]+` OWNED BY NONE`); err != nil {
				return err
			}
			owned = append(owned, ownedSeq{seq: s[0], table: t, col: s[1]})
		}
	}
	for _, t := range d.Tables {
		if _, err := tx.Exec(ctx, `DROP TABLE `+pgx.Identifier{d.Schema, t}.Sanitize()+` CASCADE`); err != nil {
			return err
		}
	}
	for _, t := range d.Tables {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+sh+`.`+pgx.Identifier{t}.Sanitize()+` SET SCHEMA `+pgx.Identifier{d.Schema}.Sanitize()); err != nil {
			return err
		}
	}
	for _, o := range owned {
		if _, err := tx.Exec(ctx, `ALTER SEQUENCE `+o.seq+` OWNED BY `+pgx.Identifier{d.Schema, o.table, o.col}.Sanitize()); err != nil {
			return fmt.Errorf("handing sequence %s to the rebuilt %s: %w", o.seq, o.table, err)
		}
	}
	// The extended statistics of the shadow tables, created in the shadow schema under the live
	// names (whose objects went with the live tables), follow them: a statistics object stays
	// in its schema when its table moves, and the shadow schema is dropped after the swap.
	rows, err = tx.Query(ctx, `SELECT quote_ident(stxname) FROM pg_statistic_ext
        WHERE stxnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) ORDER BY oid`, shadow)
	if err != nil {
		return err
	}
	stats, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, st := range stats {
		if _, err := tx.Exec(ctx, `ALTER STATISTICS `+sh+`.`+st+` SET SCHEMA `+pgx.Identifier{d.Schema}.Sanitize()); err != nil {
			return fmt.Errorf("moving statistics %s: %w", st, err)
		}
	}
	for _, f := range fks {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+f.table+` ADD CONSTRAINT `+pgx.Identifier{f.name}.Sanitize()+` `+f.def); err != nil {
			return fmt.Errorf("re-creating foreign key %s: %w", f.name, err)
		}
	}
	return nil
}

// accessOf returns the statements that give table target the grants and then the owner of
// table live.
func accessOf(ctx context.Context, tx pgx.Tx, live, target string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT stmt FROM (
            SELECT 0 AS ord, 'GRANT ' || a.privilege_type || ' ON TABLE ' || $2 || ' TO ' ||
                CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END ||
                CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END AS stmt
            FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
            WHERE c.oid = $1::regclass AND a.grantee <> c.relowner
            UNION ALL
            SELECT 1, 'ALTER TABLE ' || $2 || ' OWNER TO ' || quote_ident(pg_get_userbyid(c.relowner))
            FROM pg_class c WHERE c.oid = $1::regclass) s
        ORDER BY ord`, live, target)
	if err != nil {
		return nil, fmt.Errorf("reading the owner and grants of %s: %w", live, err)
	}
	stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reading the owner and grants of %s: %w", live, err)
	}
	// The owner comes last: once it changes, the operator may no longer be allowed to grant.
	return stmts, nil
}

// diff returns the rows that are in the live tables but not in the scratch ones, and the
// other way round (multisets: a duplicated row counts).
func diff(ctx context.Context, tx pgx.Tx, d Definition, scratch string) ([]Diff, error) {
	var out []Diff
	for _, t := range d.Tables {
		live := pgx.Identifier{d.Schema, t}.Sanitize()
		built := pgx.Identifier{scratch, t}.Sanitize()
		for _, q := range []struct{ side, a, b string }{{"live", live, built}, {"rebuilt", built, live}} {
			rows, err := tx.Query(ctx, `SELECT row_to_json(x)::text FROM (SELECT * FROM `+q.a+` EXCEPT ALL SELECT * FROM `+q.b+`) x`)
			if err != nil {
				return nil, fmt.Errorf("comparing %s: %w", t, err)
			}
			for rows.Next() {
				var row string
				if err := rows.Scan(&row); err != nil {
					rows.Close()
					return nil, err
				}
				out = append(out, Diff{Table: t, Side: q.side, Row: row})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func qualified(d Definition) []string {
	out := make([]string, len(d.Tables))
	for i, t := range d.Tables {
		out[i] = pgx.Identifier{d.Schema, t}.Sanitize()
	}
	return out
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
