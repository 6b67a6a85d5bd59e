package eventstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/pg"
)

func TestAppendNewTxStartsANewStreamAtVersionOne(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	var res eventstore.AppendResult
	err := pg.InTx(ctx, s.DB(), func(tx pgx.Tx) error {
		var err error
		res, err = s.AppendNewTx(ctx, tx, "n-1", ev("n-1", 1), ev("n-1", 2))
		return err
	})
	if err != nil || res.Version != 2 {
		t.Fatalf("append to a new stream: version %d, %v", res.Version, err)
	}
	recs, err := s.ReadStream(ctx, s.DB(), "n-1", 0)
	if err != nil || len(recs) != 2 || recs[0].Version != 1 || recs[1].Version != 2 || recs[1].Position != res.Last {
		t.Fatalf("stream after the append: %+v %v", recs, err)
	}
}

// On an existing stream the append fails in the database, so the transaction is aborted:
// nothing after it can commit.
func TestAppendNewTxOnExistingStreamAbortsTheTransaction(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "n-1", eventstore.NoStream, ev("n-1", 1)); err != nil {
		t.Fatal(err)
	}
	tx, err := s.DB().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = s.AppendNewTx(ctx, tx, "n-1", ev("n-1", 2))
	var ce *eventstore.ConcurrencyError
	if !errors.As(err, &ce) || !errors.Is(err, eventstore.ErrConcurrency) || ce.Expected != eventstore.NoStream {
		t.Fatalf("append to an existing stream: %v, want a concurrency error", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("commit after the failed append: %v, want a rollback", err)
	}
	if v, _ := s.Version(ctx, s.DB(), "n-1"); v != 1 {
		t.Fatalf("stream version %d, want 1", v)
	}
}
