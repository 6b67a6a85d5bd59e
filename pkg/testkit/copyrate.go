package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CopyRate is the raw PostgreSQL limit that write benchmarks report beside their own rate: it
// COPYs n generated rows, in one transaction, into an unindexed copy of table (CREATE TABLE …
// (LIKE table), dropped afterwards) and returns rows per second. fill sets the columns of the
// i-th row (1-based) in values, which is reused from row to row and laid out as columns.
func CopyRate(tb testing.TB, db *pgxpool.Pool, table string, columns []string, n int64, fill func(i int64, values []any)) float64 {
	tb.Helper()
	ctx := context.Background()
	raw := pgx.Identifier{"raw_copy_" + table}
	if _, err := db.Exec(ctx, `CREATE TABLE `+raw.Sanitize()+` (LIKE `+pgx.Identifier{table}.Sanitize()+`)`); err != nil {
		tb.Fatal(err)
	}
	defer func() { _, _ = db.Exec(ctx, `DROP TABLE `+raw.Sanitize()) }()
	values := make([]any, len(columns))
	var i int64
	start := time.Now()
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, raw, columns, pgx.CopyFromFunc(func() ([]any, error) {
			if i++; i > n {
				return nil, nil
			}
			fill(i, values)
			return values, nil
		}))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}
