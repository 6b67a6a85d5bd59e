package testkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The databases of a test process that no longer runs are dropped; those of running
// processes are kept.
func TestDatabasesOfDeadProcessesAreDropped(t *testing.T) {
	admin := PostgresServer(t)
	dead := 4_000_000
	for processRuns(dead) {
		dead--
	}
	ctx := context.Background()
	orphan := fmt.Sprintf("pptest_%d_%s", dead, randomHex(8))
	orphanTpl := fmt.Sprintf("pptpl_%d_%s", dead, randomHex(4))
	mine := fmt.Sprintf("pptest_%d_%s", os.Getpid(), randomHex(8))
	for _, name := range []string{orphan, orphanTpl, mine} {
		if err := createDatabase(ctx, admin, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dropDatabase(context.Background(), admin, name) })
	}
	dropped, err := dropDatabasesOfDeadProcesses(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dropped, orphan) || !slices.Contains(dropped, orphanTpl) || slices.Contains(dropped, mine) {
		t.Fatalf("dropped %v; want %s and %s, not %s", dropped, orphan, orphanTpl, mine)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname = ANY($1)`, []string{orphan, orphanTpl, mine})
	if err != nil {
		t.Fatal(err)
	}
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{mine}) {
		t.Fatalf("databases left %v, want only %s", left, mine)
	}
}
