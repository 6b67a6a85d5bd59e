package projection

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

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
		wg.Go(func() {
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
		})
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
