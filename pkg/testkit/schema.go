package testkit

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TableSchema lists, as sorted definitions, what a migration or a rebuild must leave on table
// (in the pool's search path): its indexes, its primary key, unique and exclusion constraints,
// its extended statistics objects, and its columns (only those named, when any are) with their
// type, collation, nullability and generation expression. Two lists compare equal exactly when
// those are the same.
func TableSchema(tb testing.TB, db *pgxpool.Pool, table string, columns ...string) []string {
	tb.Helper()
	rows, err := db.Query(context.Background(), `
        SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1
        UNION ALL
        SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
        WHERE conrelid = $1::regclass AND contype IN ('p', 'u', 'x')
        UNION ALL
        SELECT 'statistics ' || pg_get_statisticsobjdef(oid) FROM pg_statistic_ext WHERE stxrelid = $1::regclass
        UNION ALL
        SELECT 'column ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) ||
               CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                    THEN ' COLLATE ' || quote_ident(c.collname) ELSE '' END ||
               CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||
               CASE a.attgenerated WHEN 's' THEN ' GENERATED ' || pg_get_expr(d.adbin, d.adrelid) ELSE '' END
        FROM pg_attribute a
        JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_collation c ON c.oid = a.attcollation
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
            AND (cardinality($2::text[]) = 0 OR a.attname = ANY ($2))
        ORDER BY 1`, table, columns)
	if err != nil {
		tb.Fatalf("reading the schema of %s: %v", table, err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatalf("reading the schema of %s: %v", table, err)
	}
	return defs
}

// GooseSection returns the Up or Down section of a goose SQL migration file of fsys.
func GooseSection(tb testing.TB, fsys fs.FS, file, section string) string {
	tb.Helper()
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		tb.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "-- +goose "+section+"\n")
	if !ok {
		tb.Fatalf("%s has no %s section", file, section)
	}
	rest, _, _ = strings.Cut(rest, "-- +goose ")
	return rest
}
