package projection

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

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
