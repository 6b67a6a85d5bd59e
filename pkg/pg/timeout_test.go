package pg_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// WithStatementTimeout bounds what a connection of the pool may hold (issue 16: the gateway's
// pool had no bound): a statement running longer is cancelled by the server (57014), and a
// session left idle in a transaction longer is ended, its locks released.
func TestWithStatementTimeoutCancelsLongStatementsAndEndsIdleTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := pg.Connect(ctx, testkit.NewDatabase(t), "", pg.WithStatementTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var setting, idle string
	if err := db.QueryRow(ctx, `SELECT current_setting('statement_timeout'),
        current_setting('idle_in_transaction_session_timeout')`).Scan(&setting, &idle); err != nil {
		t.Fatal(err)
	}
	if setting != "300ms" || idle != "300ms" {
		t.Fatalf("statement_timeout %q, idle_in_transaction_session_timeout %q, want 300ms", setting, idle)
	}
	var pe *pgconn.PgError
	if _, err := db.Exec(ctx, `SELECT pg_sleep(30)`); !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("a 30 s statement: %v, want query_canceled (57014)", err)
	}
	// A transaction left idle (its client stuck) is ended by the server: the next statement on it
	// fails, whenever the client comes back.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, time.Minute, 100*time.Millisecond, func() error {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
            AND state = 'idle in transaction'`).Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			return errors.New("the idle transaction is still open")
		}
		return nil
	})
	if _, err := tx.Exec(ctx, `SELECT 1`); err == nil {
		t.Fatal("a transaction idle past the timeout still works")
	}
	// Zero leaves the server's setting.
	plain, err := pg.Connect(ctx, testkit.NewDatabase(t), "", pg.WithStatementTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	if err := plain.QueryRow(ctx, `SELECT current_setting('statement_timeout')`).Scan(&setting); err != nil || setting != "0" {
		t.Fatalf("without a timeout: %q, %v", setting, err)
	}
}
