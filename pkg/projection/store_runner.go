package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
)

// StoreRunner feeds a projector from an event store in the same database: each batch of
// events and the checkpoint after it are written in one transaction.
type StoreRunner struct {
	store     *eventstore.Store
	projector Projector
	batchSize int
	poll      time.Duration
	log       *slog.Logger
	progress  chan struct{}
}

// StoreRunnerOptions configures a StoreRunner.
type StoreRunnerOptions struct {
	BatchSize    int
	PollInterval time.Duration
	Logger       *slog.Logger
}

// NewStoreRunner returns a runner for p over store.
func NewStoreRunner(store *eventstore.Store, p Projector, o StoreRunnerOptions) *StoreRunner {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &StoreRunner{store: store, projector: p, batchSize: o.BatchSize, poll: o.PollInterval,
		log: o.Logger.With("projection", p.Name()), progress: make(chan struct{}, 1)}
}

// Run applies events as they are appended until ctx ends. Several replicas may run it: the
// checkpoint row lock makes them take turns, batch by batch.
func (r *StoreRunner) Run(ctx context.Context) error {
	for {
		n, err := r.Step(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			r.log.Error("projection step failed; retrying", "err", err)
		}
		if n == 0 || err != nil {
			t := time.NewTimer(r.poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// CatchUp applies every event committed before the call, and returns how many it applied.
// It waits for transactions still in flight that hold the gap-safe tail back.
func (r *StoreRunner) CatchUp(ctx context.Context) (int, error) {
	target, err := r.store.LastCommitted(ctx, r.store.DB())
	if err != nil {
		return 0, err
	}
	total := 0
	for {
		cp, err := r.Checkpoint(ctx)
		if err != nil || !cp.Less(target) {
			return total, err
		}
		n, err := r.Step(ctx)
		total += n
		if err != nil {
			return total, err
		}
		if n == 0 {
			t := time.NewTimer(5 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return total, ctx.Err()
			case <-t.C:
			}
		}
	}
}

// Step applies at most one batch and returns how many events it applied.
func (r *StoreRunner) Step(ctx context.Context) (int, error) {
	var n int
	err := inTx(ctx, r.store, func(tx pgx.Tx) error {
		cp, err := lockCheckpoint(ctx, tx, r.projector.Name())
		if err != nil {
			return err
		}
		recs, err := r.store.ReadAll(ctx, tx, cp, r.batchSize)
		if err != nil || len(recs) == 0 {
			return err
		}
		evs, err := decodeRecorded(recs)
		if err != nil {
			return err
		}
		if err := applyAll(ctx, tx, r.projector, evs); err != nil {
			return fmt.Errorf("applying events after %s: %w", cp, err)
		}
		n = len(recs)
		return saveCheckpoint(ctx, tx, r.projector.Name(), recs[len(recs)-1].Position)
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		select {
		case r.progress <- struct{}{}:
		default:
		}
	}
	return n, nil
}

// Checkpoint returns how far the projection has applied the store.
func (r *StoreRunner) Checkpoint(ctx context.Context) (eventstore.Position, error) {
	return readCheckpoint(ctx, r.store.DB(), r.projector.Name())
}

// WaitFor blocks until the projection has applied the event at pos (read your writes).
func (r *StoreRunner) WaitFor(ctx context.Context, pos eventstore.Position) error {
	for {
		cp, err := r.Checkpoint(ctx)
		if err != nil {
			return err
		}
		if !cp.Less(pos) {
			return nil
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-r.progress:
			t.Stop()
		case <-t.C:
		}
	}
}

// Rebuild empties the projector's tables and its checkpoint in one transaction, then applies
// the whole store again.
func (r *StoreRunner) Rebuild(ctx context.Context) (int, error) {
	res, ok := r.projector.(Resetter)
	if !ok {
		return 0, fmt.Errorf("projection %s cannot be reset", r.projector.Name())
	}
	err := inTx(ctx, r.store, func(tx pgx.Tx) error {
		if _, err := lockCheckpoint(ctx, tx, r.projector.Name()); err != nil {
			return err
		}
		if err := res.Reset(ctx, tx); err != nil {
			return fmt.Errorf("resetting %s: %w", r.projector.Name(), err)
		}
		_, err := tx.Exec(ctx, `DELETE FROM projection_checkpoints WHERE name = $1`, r.projector.Name())
		return err
	})
	if err != nil {
		return 0, err
	}
	return r.CatchUp(ctx)
}

func decodeRecorded(recs []eventstore.Recorded) ([]Event, error) {
	evs := make([]Event, len(recs))
	for i, rec := range recs {
		msg, _, err := events.Decode(rec.Subject, events.ContentTypeProtobuf, rec.Payload)
		if err != nil {
			// The store only holds events its own service validated: this is a bug, and the
			// projection must stop here rather than silently diverge.
			return nil, fmt.Errorf("event %s at %s: %w", rec.ID, rec.Position, err)
		}
		evs[i] = Event{ID: rec.ID, Type: rec.Type, Subject: rec.Subject, Msg: msg, OccurredAt: rec.OccurredAt,
			Position: rec.Position, StreamID: rec.StreamID, Version: rec.Version}
	}
	return evs, nil
}

func inTx(ctx context.Context, store *eventstore.Store, fn func(pgx.Tx) error) error {
	tx, err := store.DB().Begin(ctx)
	if err != nil {
		return fmt.Errorf("beginning projection transaction: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// lockCheckpoint creates the projection's checkpoint row if needed and locks it for the
// transaction, so replicas apply batches one at a time.
func lockCheckpoint(ctx context.Context, tx pgx.Tx, name string) (eventstore.Position, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (name, tx_id, position)
        VALUES ($1, '0'::xid8, 0) ON CONFLICT (name) DO NOTHING`, name); err != nil {
		return eventstore.Position{}, fmt.Errorf("creating checkpoint: %w", err)
	}
	return scanCheckpoint(tx.QueryRow(ctx, `SELECT tx_id::text, position FROM projection_checkpoints
        WHERE name = $1 FOR UPDATE`, name))
}

func readCheckpoint(ctx context.Context, q eventstore.Querier, name string) (eventstore.Position, error) {
	p, err := scanCheckpoint(q.QueryRow(ctx, `SELECT tx_id::text, position FROM projection_checkpoints WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return eventstore.Position{}, nil
	}
	return p, err
}

func scanCheckpoint(row pgx.Row) (eventstore.Position, error) {
	var (
		tx  string
		pos int64
	)
	if err := row.Scan(&tx, &pos); err != nil {
		return eventstore.Position{}, err
	}
	id, err := strconv.ParseUint(tx, 10, 64)
	if err != nil {
		return eventstore.Position{}, fmt.Errorf("checkpoint transaction id %q: %w", tx, err)
	}
	return eventstore.Position{TxID: id, Pos: pos}, nil
}

func saveCheckpoint(ctx context.Context, tx pgx.Tx, name string, pos eventstore.Position) error {
	_, err := tx.Exec(ctx, `UPDATE projection_checkpoints SET tx_id = $2::text::xid8, position = $3, updated_at = now()
        WHERE name = $1`, name, strconv.FormatUint(pos.TxID, 10), pos.Pos)
	if err != nil {
		return fmt.Errorf("saving checkpoint: %w", err)
	}
	return nil
}
