package adapters

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/eventstore"
)

// writer runs a statement whose only result is its error: a transaction runs it at once, a
// pipeline may hold it back.
type writer interface {
	write(ctx context.Context, sql string, args ...any) error
}

// txWriter runs each statement at once in its transaction.
type txWriter struct{ tx pgx.Tx }

func (w txWriter) write(ctx context.Context, sql string, args ...any) error {
	_, err := w.tx.Exec(ctx, sql, args...)
	return err
}

// batcher is what a pipeline runs on: a connection or a transaction.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// pipeline holds back the statements written to it and sends them with the next statement run
// through it, in one round trip (a pgx batch). It runs everything in order, so it is an
// eventstore.Querier like a transaction; the error of a held-back statement is the error of the
// statement it went out with. flush sends what is left.
//
// On a connection, a pipeline can also carry the BEGIN of its transaction with the first
// statement (begin) and the COMMIT with the last (commitWithNext), so that the transaction
// costs no round trip of its own (Repository.Create).
type pipeline struct {
	tx         batcher
	queued     pgx.Batch
	commitNext bool // send COMMIT right after the next statement run
	committed  bool // COMMIT has been sent (and succeeded, unless a statement failed)
}

// begin holds back the BEGIN of a transaction on the pipeline's connection.
func (p *pipeline) begin() { p.queued.Queue("BEGIN") }

// commitWithNext sends COMMIT right behind the next statement run through the pipeline, in
// the same round trip. That statement must fail in the database whenever the transaction
// must not commit: the server skips the COMMIT after an error, but not after a result the
// caller would refuse.
func (p *pipeline) commitWithNext() { p.commitNext = true }

var _ eventstore.Querier = (*pipeline)(nil)

func (p *pipeline) write(_ context.Context, sql string, args ...any) error {
	p.queued.Queue(sql, args...)
	return nil
}

// send sends the held-back statements followed by sql, and returns the results positioned on
// sql's.
func (p *pipeline) send(ctx context.Context, sql string, args ...any) (pgx.BatchResults, error) {
	b := p.queued
	p.queued = pgx.Batch{}
	held := b.Len()
	b.Queue(sql, args...)
	if p.commitNext {
		// Read by br.Close, after sql's result: its error is the statement's.
		b.Queue("COMMIT")
		p.commitNext, p.committed = false, true
	}
	br := p.tx.SendBatch(ctx, &b)
	for range held {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	return br, nil
}

// flush sends the held-back statements.
func (p *pipeline) flush(ctx context.Context) error {
	if p.queued.Len() == 0 {
		return nil
	}
	b := p.queued
	p.queued = pgx.Batch{}
	return sendBatch(ctx, p.tx, &b, "writing")
}

// Exec implements eventstore.Querier.
func (p *pipeline) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br, err := p.send(ctx, sql, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query implements eventstore.Querier.
func (p *pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.tx.Query(ctx, sql, args...)
}

// QueryRow implements eventstore.Querier.
func (p *pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	br, err := p.send(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// batchRow is the row of the last statement of a batch; scanning it ends the batch.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("ending batch: %w", cerr)
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
