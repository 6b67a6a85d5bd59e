package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

func sqlFile(table string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE " + table + " (id int);\n-- +goose Down\nDROP TABLE " + table + ";\n")}
}

// A shared library's migration added after a service's higher-numbered ones were applied (the
// projection library's 00102 after a service's 03001) is applied on the next start instead of
// refusing it as out of order.
func TestLibraryMigrationAddedLaterIsApplied(t *testing.T) {
	t.Parallel()
	dsn := testkit.NewDatabase(t)
	ctx := context.Background()
	library := fstest.MapFS{"00101_lib.sql": sqlFile("lib_first")}
	service := fstest.MapFS{"03001_service.sql": sqlFile("service_table")}
	if err := migrate.Up(ctx, dsn, migrate.Set{Schema: "svc", Sources: []fs.FS{library, service}}); err != nil {
		t.Fatal(err)
	}
	library["00102_lib.sql"] = sqlFile("lib_second")
	if err := migrate.Up(ctx, dsn, migrate.Set{Schema: "svc", Sources: []fs.FS{library, service}}); err != nil {
		t.Fatalf("applying a library migration numbered below an applied one: %v", err)
	}
	db := testkit.NewPool(t, dsn, "svc")
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
        WHERE table_schema = 'svc' AND table_name IN ('lib_first', 'lib_second', 'service_table')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d of the 3 tables exist", n)
	}
}

// A GoSource's Go migration runs in order with the SQL files, in its own transaction, exactly
// once; a failing one rolls back and stops the migration.
func TestGoMigrationRunsInOrderOnce(t *testing.T) {
	t.Parallel()
	dsn := testkit.NewDatabase(t)
	ctx := context.Background()
	runs := 0
	fill := goose.NewGoMigration(3002, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		runs++
		_, err := tx.ExecContext(ctx, `INSERT INTO service_table (id) SELECT id * 10 FROM service_table`)
		return err
	}}, nil)
	files := fstest.MapFS{
		"03001_service.sql": &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE service_table (id int);\nINSERT INTO service_table VALUES (1);\n")},
		"03003_after.sql":   &fstest.MapFile{Data: []byte("-- +goose Up\nINSERT INTO service_table SELECT count(*) FROM service_table;\n")},
	}
	set := migrate.Set{Schema: "svc", Sources: []fs.FS{migrate.GoSource{FS: files, Go: []*goose.Migration{fill}}}}
	for range 2 {
		if err := migrate.Up(ctx, dsn, set); err != nil {
			t.Fatal(err)
		}
	}
	db := testkit.NewPool(t, dsn, "svc")
	var got string
	if err := db.QueryRow(ctx, `SELECT string_agg(id::text, ',' ORDER BY id) FROM service_table`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	// 1, then 10 from the Go migration, then the count 2 from 03003.
	if got != "1,2,10" || runs != 1 {
		t.Fatalf("rows %s after %d runs of the Go migration, want 1,2,10 after 1", got, runs)
	}
	a, _ := set.Fingerprint()
	b, _ := migrate.Set{Schema: "svc", Sources: []fs.FS{files}}.Fingerprint()
	if a == b {
		t.Fatal("the fingerprint ignores the Go migration")
	}

	failing := goose.NewGoMigration(3004, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM service_table`); err != nil {
			return err
		}
		return errors.New("cannot convert")
	}}, nil)
	set.Sources = []fs.FS{migrate.GoSource{FS: files, Go: []*goose.Migration{fill, failing}}}
	if err := migrate.Up(ctx, dsn, set); err == nil || !strings.Contains(err.Error(), "cannot convert") {
		t.Fatalf("a failing Go migration gave %v", err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM service_table`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d rows after the failed migration (%v), want its delete rolled back", n, err)
	}
}
