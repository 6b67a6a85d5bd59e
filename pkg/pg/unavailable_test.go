package pg_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/testkit"
)

// A stopped server and a broken connection are Unavailable; a refused statement is not.
func TestALostServerOrSessionIsUnavailableButARefusedStatementIsNot(t *testing.T) {
	ctx := context.Background()
	// Nobody listens on this port: connecting fails.
	_, err := pgconn.Connect(ctx, "postgres://x@127.0.0.1:1/x?connect_timeout=2")
	if !pg.Unavailable(err) {
		t.Errorf("connection refused: Unavailable(%v) = false", err)
	}
	for _, code := range []string{"57P01", "08006", "53300"} {
		if err := fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code}); !pg.Unavailable(err) {
			t.Errorf("SQLSTATE %s: not unavailable", code)
		}
	}
	// A session the server ends (what a failover does to every connection of the old primary).
	dsn := testkit.NewDatabase(t)
	victim, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close(ctx)
	killer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	if _, err := killer.Exec(ctx, `SELECT pg_terminate_backend($1)`, victim.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	if _, err := victim.Exec(ctx, `SELECT 1`); !pg.Unavailable(err) {
		t.Errorf("terminated session: Unavailable(%v) = false", err)
	}
	var refused error
	if _, refused = killer.Exec(ctx, `SELECT * FROM no_such_table`); pg.Unavailable(refused) {
		t.Errorf("refused statement: Unavailable(%v) = true", refused)
	}
	for _, err := range []error{&pgconn.PgError{Code: "23505"}, &pgconn.PgError{Code: "42P01"}, errors.New("no rows"), nil} {
		if pg.Unavailable(err) {
			t.Errorf("%v: unavailable", err)
		}
	}
}
