package devstack

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/pglocal"
	"github.com/payplat/platform/pkg/testkit"
)

// pgTestDir returns a directory for a local cluster that the postgres user can reach when
// the tests run as root (t.TempDir's parent is private to root).
func pgTestDir(t *testing.T) string {
	t.Helper()
	if _, err := pglocal.BinDir(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err) // integration tests never skip silently in CI
		}
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "devstack-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestLocalPostgresAdoptsARunningServerAndKeepsItsDataAcrossRuns(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(pgTestDir(t), "pg")
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logs := &testkit.Buffer{}
	log := testLogger(logs)

	// First run: initdb, start, create the database.
	pg, err := StartLocalPostgres(ctx, dir, port, log)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = pg.Stop()
		}
	})
	if pg.Adopted() {
		t.Fatal("a fresh cluster reported as adopted")
	}
	execSQL(t, ctx, pg.URL(Database), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)")

	// A server already runs on the cluster (an earlier dev stack that daemonised it, or one
	// started by hand): the next start adopts it, and says so.
	again, err := StartLocalPostgres(ctx, dir, freePort(t), log)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Adopted() || again.URL(Database) != pg.URL(Database) {
		t.Fatalf("running server not adopted on its port: adopted=%v url=%s", again.Adopted(), again.URL(Database))
	}
	// Never silently: the developer is told, at warn level, with the server's pid.
	if err := contains(logs, "level=WARN msg=\"PostgreSQL was already running", "pid=")(); err != nil {
		t.Fatal(err)
	}

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, pg.URL(Database)); err == nil {
		t.Fatal("server still answers after Stop")
	}

	// Second run: the cluster and its data are reused, no initdb.
	pg2, err := StartLocalPostgres(ctx, dir, port, log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := pg2.Stop(); err != nil {
			t.Error(err)
		}
		stopped = true
	}()
	if pg2.Adopted() {
		t.Fatal("a stopped cluster reported as adopted")
	}
	conn, err := pgx.Connect(ctx, pg2.URL(Database))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Fatalf("data of the first run: %d, %v", v, err)
	}
}

func TestLocalPostgresReportsABusyPort(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(pgTestDir(t), "pg")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := testLogger(&testkit.Buffer{})
	first, err := StartLocalPostgres(ctx, filepath.Join(pgTestDir(t), "pg"), freePort(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Stop() })
	busy := first.port
	_, err = StartLocalPostgres(ctx, dir, busy, log)
	if err == nil {
		t.Fatal("started a second server on a busy port")
	}
	t.Logf("error, as a developer sees it: %v", err)
}

func execSQL(t *testing.T, ctx context.Context, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}
