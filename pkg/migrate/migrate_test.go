package migrate_test

import (
	"context"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

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
