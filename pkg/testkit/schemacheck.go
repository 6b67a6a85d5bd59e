package testkit

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AssertTableSchema fails the test unless TableSchema(table, columns...) is want, printing both;
// when says which state of the migration is checked ("after 03003", "after 03003 down"). The
// check every test of a migration that reshapes a table makes after Up, Down and Up again.
func AssertTableSchema(tb testing.TB, db *pgxpool.Pool, when string, want []string, table string, columns ...string) {
	tb.Helper()
	if got := TableSchema(tb, db, table, columns...); strings.Join(got, "\n") != strings.Join(want, "\n") {
		tb.Fatalf("%s %s:\n%s\nwant:\n%s", table, when, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// AssertTenantColumn fails the test unless every row of table holds in column the tenant key
// the readers compute, hashtextextended(company_id || '/' || environment, 0), and its rows
// belong to `tenants` tenants (company and environment) with as many distinct keys: what a
// migration adding a generated tenant column must leave on the rows it finds.
func AssertTenantColumn(tb testing.TB, db *pgxpool.Pool, table, column string, tenants int) {
	tb.Helper()
	t, c := pgx.Identifier{table}.Sanitize(), pgx.Identifier{column}.Sanitize()
	var rowsOff, got, keys int
	if err := db.QueryRow(context.Background(), `SELECT
            count(*) FILTER (WHERE `+c+` IS DISTINCT FROM hashtextextended(company_id::text || '/' || environment::text, 0)),
            count(DISTINCT (company_id, environment)), count(DISTINCT `+c+`) FROM `+t).
		Scan(&rowsOff, &got, &keys); err != nil {
		tb.Fatal(err)
	}
	if rowsOff != 0 || got != tenants || keys != tenants {
		tb.Fatalf("%s: %d rows with another %s; %d tenants, %d distinct %s, want %d", table, rowsOff, column, got,
			keys, column, tenants)
	}
}

// EstimatedRows is the planner's estimate of the rows query returns, with the plan (EXPLAIN
// FORMAT JSON) for the failure message: tests prove with it that the statistics a migration
// creates keep the estimate for one tenant near its real number of rows.
func EstimatedRows(tb testing.TB, db *pgxpool.Pool, query string) (float64, []map[string]any) {
	tb.Helper()
	var plan []map[string]any
	if err := db.QueryRow(context.Background(), `EXPLAIN (FORMAT JSON) `+query).Scan(&plan); err != nil {
		tb.Fatal(err)
	}
	rows, _ := plan[0]["Plan"].(map[string]any)["Plan Rows"].(float64)
	return rows, plan
}

// AssertTenantRowsEstimated fails the test unless the planner estimates the rows of table of
// one tenant (company c7, environment live), filtered on column, company_id and environment as
// every reader filters, within a factor of two of rows: the count the test filled each tenant
// with, not that divided by the number of tenants (the statistics of the tenant column missing).
func AssertTenantRowsEstimated(tb testing.TB, db *pgxpool.Pool, table, column string, rows float64) {
	tb.Helper()
	got, plan := EstimatedRows(tb, db, `SELECT 1 FROM `+pgx.Identifier{table}.Sanitize()+` WHERE `+
		pgx.Identifier{column}.Sanitize()+` = hashtextextended('c7'::text || '/' || 'live'::text, 0)
            AND company_id = 'c7' AND environment = 'live'`)
	if got < rows/2 || got > 2*rows {
		tb.Fatalf("%s: a tenant of %.0f rows estimated at %.0f rows: %v", table, rows, got, plan)
	}
}

// ExecGooseSection runs the Up or Down section (GooseSection) of the migration file of fsys on
// db, as a test stepping one migration down and up again over rows it wrote does.
func ExecGooseSection(tb testing.TB, db *pgxpool.Pool, fsys fs.FS, file, section string) {
	tb.Helper()
	if _, err := db.Exec(context.Background(), GooseSection(tb, fsys, file, section)); err != nil {
		tb.Fatalf("%s %s: %v", file, section, err)
	}
}
