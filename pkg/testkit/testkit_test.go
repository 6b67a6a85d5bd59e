package testkit

import (
	"context"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/migrate"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

var thingsSet = migrate.Set{Schema: "things", Sources: []fs.FS{os.DirFS("testdata/mig")}}

func TestNewDatabaseIsMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	a := NewPool(t, NewDatabase(t, thingsSet), "things")
	b := NewPool(t, NewDatabase(t, thingsSet), "things")
	ctx := context.Background()
	if _, err := a.Exec(ctx, "INSERT INTO things VALUES (1, 'a')"); err != nil {
		t.Fatalf("insert into migrated table: %v", err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM things").Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	if n != 0 {
		t.Fatalf("second database sees %d rows of the first", n)
	}
}

func TestNewDatabaseIsDroppedWhenItsTestEnds(t *testing.T) {
	t.Parallel()
	var dsn string
	t.Run("inner", func(t *testing.T) { dsn = NewDatabase(t, thingsSet) })
	ctx := context.Background()
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		conn.Close(ctx)
		t.Fatal("test database still exists after its test ended")
	}
}

func TestTemporaryClusterStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	dsn, err := startTempCluster()
	if err != nil {
		t.Fatalf("starting temporary cluster: %v", err)
	}
	t.Cleanup(stopTempCluster)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to temporary cluster: %v", err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("query on temporary cluster: %v", err)
	}
}

func TestNATSStartsAServerWithJetStreamEnabled(t *testing.T) {
	t.Parallel()
	nc, err := nats.Connect(NATS(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(); err != nil {
		t.Fatalf("jetstream not enabled: %v", err)
	}
}
