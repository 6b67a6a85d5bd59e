package service_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/service"
)

// Migration 02002 moves each movement's idempotency key from movement_keys into the movement's
// row: a database migrated before it keeps every key, still unique per pool, and a repeated
// fact is still refused afterwards.
func TestMovementKeysMoveIntoTheMovementRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := fstest.MapFS{}
	if err := fs.WalkDir(adapters.Migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(path, "02001_") {
			return err
		}
		data, err := fs.ReadFile(adapters.Migrations, path)
		old[path] = &fstest.MapFile{Data: data}
		return err
	}); err != nil || len(old) != 1 {
		t.Fatalf("reading migration 02001: %v (%d files)", err, len(old))
	}
	o := service.Options()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: []fs.FS{eventstore.Migrations, projection.Migrations, old}})
	db := testkit.NewPool(t, dsn, o.Schema)
	if _, err := db.Exec(ctx, `
        INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before, balance_after, status, created_at)
        VALUES ('00000000-0000-0000-0000-000000000001', 'c1', 'live', 1, 'DEPOSIT', 5000000, 0, 5000000, 'CONFIRMED', now()),
               ('00000000-0000-0000-0000-000000000002', 'c1', 'live', 2, 'DEBIT', -1000000, 5000000, 4000000, 'CONFIRMED', now()),
               ('00000000-0000-0000-0000-000000000003', 'c2', 'test', 1, 'DEPOSIT', 1000000, 0, 1000000, 'CONFIRMED', now());
        INSERT INTO movement_keys (company_id, environment, key, movement_id)
        VALUES ('c1', 'live', 'deposit:0xaa', '00000000-0000-0000-0000-000000000001'),
               ('c1', 'live', 'debit:p-1', '00000000-0000-0000-0000-000000000002'),
               ('c2', 'test', 'deposit:0xaa', '00000000-0000-0000-0000-000000000003')`); err != nil {
		t.Fatal(err)
	}
	if err := migrate.Up(ctx, dsn, migrate.Set{Schema: o.Schema, Sources: o.Migrations}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, `SELECT id::text || ' ' || key FROM movements ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	rows.Close()
	want := []string{"00000000-0000-0000-0000-000000000001 deposit:0xaa", "00000000-0000-0000-0000-000000000002 debit:p-1",
		"00000000-0000-0000-0000-000000000003 deposit:0xaa"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("movements after the migration:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var gone bool
	if err := db.QueryRow(ctx, `SELECT to_regclass('movement_keys') IS NULL`).Scan(&gone); err != nil || !gone {
		t.Fatalf("movement_keys still there (%v)", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before,
            balance_after, status, created_at, key)
        VALUES ('00000000-0000-0000-0000-000000000004', 'c1', 'live', 3, 'DEPOSIT', 1, 4000000, 4000001, 'CONFIRMED', now(),
            'deposit:0xaa')`); err == nil {
		t.Fatal("a second movement with a pool's key was accepted")
	}
}
