package service_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/migrations"
	"github.com/payplat/platform/services/pool/service"
)

// Migration 02002 moves each movement's idempotency key from movement_keys into the movement's
// row: a database migrated before it keeps every key, still unique per pool, and a repeated
// fact is still refused afterwards.
func TestMovementKeysMoveIntoTheMovementRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := fstest.MapFS{}
	if err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(path, "02001_") {
			return err
		}
		data, err := fs.ReadFile(migrations.FS, path)
		old[path] = &fstest.MapFile{Data: data}
		return err
	}); err != nil || len(old) != 1 {
		t.Fatalf("reading migration 02001: %v (%d files)", err, len(old))
	}
	o := service.Options(service.Config{})
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
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
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

// poolMigrationsBefore returns the pool's migrations numbered below version (a file name
// prefix such as "02003").
func poolMigrationsBefore(t *testing.T, version string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	if err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path >= version {
			return err
		}
		data, err := fs.ReadFile(migrations.FS, path)
		out[path] = &fstest.MapFile{Data: data}
		return err
	}); err != nil || len(out) == 0 {
		t.Fatalf("reading the migrations before %s: %v (%d files)", version, err, len(out))
	}
	return out
}

// Migration 02003 leads the indexes of movements with pool_id, a generated 64-bit hash of the
// company id and environment: a database holding movements gets it on every row (the same
// for the rows of one pool), the constraints keep refusing exactly what they refused (a
// seq or key repeated within a pool) and accepting what they accepted (the same seq and key in
// another pool), writers cannot set pool_id, and the reads of the pool service find the rows
// through it. Its Down section gives back the schema of 02002, rows intact.
func TestMovementsAreIndexedByPoolID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := service.Options(service.Config{})
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: o.Schema,
		Sources: []fs.FS{eventstore.Migrations, projection.Migrations, poolMigrationsBefore(t, "02003")}})
	db := testkit.NewPool(t, dsn, o.Schema)
	before := testkit.TableSchema(t, db, "movements", "company_id", "environment", "key", "pool_id")
	if _, err := db.Exec(ctx, `
        INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before, balance_after, status,
            created_at, key)
        VALUES ('00000000-0000-0000-0000-000000000001', 'c1', 'live', 1, 'DEPOSIT', 5000000, 0, 5000000, 'CONFIRMED', now(), 'deposit:0xaa'),
               ('00000000-0000-0000-0000-000000000002', 'c1', 'live', 2, 'DEBIT', -1000000, 5000000, 4000000, 'CONFIRMED', now(), 'debit:p-1'),
               ('00000000-0000-0000-0000-000000000003', 'c1', 'test', 1, 'DEPOSIT', 1000000, 0, 1000000, 'CONFIRMED', now(), 'deposit:0xaa'),
               ('00000000-0000-0000-0000-000000000004', 'c2', 'live', 1, 'DEPOSIT', 1000000, 0, 1000000, 'CONFIRMED', now(), 'deposit:0xaa')`); err != nil {
		t.Fatal(err)
	}
	if err := migrate.Up(ctx, dsn, migrate.Set{Schema: o.Schema, Sources: o.Migrations}); err != nil {
		t.Fatal(err)
	}

	want := []string{
		`CREATE INDEX movements_pool_credit_seq_idx ON pool.movements USING btree (pool_id, seq DESC) WHERE (type = 'CREDIT'::text)`,
		`CREATE INDEX movements_pool_debit_seq_idx ON pool.movements USING btree (pool_id, seq DESC) WHERE (type = 'DEBIT'::text)`,
		`CREATE INDEX movements_pool_deposit_seq_idx ON pool.movements USING btree (pool_id, seq DESC) WHERE (type = 'DEPOSIT'::text)`,
		`CREATE INDEX movements_pool_withdrawal_seq_idx ON pool.movements USING btree (pool_id, seq DESC) WHERE (type = 'WITHDRAWAL'::text)`,
		`CREATE UNIQUE INDEX movements_pkey ON pool.movements USING btree (id)`,
		`CREATE UNIQUE INDEX movements_pool_key_key ON pool.movements USING btree (pool_id, key, company_id, environment)`,
		`CREATE UNIQUE INDEX movements_pool_seq_key ON pool.movements USING btree (pool_id, seq, company_id, environment)`,
		`column company_id text NOT NULL`,
		`column environment text NOT NULL`,
		`column key text COLLATE "C" NOT NULL`,
		`column pool_id bigint GENERATED hashtextextended(((company_id || '/'::text) || environment), (0)::bigint)`,
		`movements_pkey PRIMARY KEY (id)`,
		`movements_pool_key_key UNIQUE (pool_id, key, company_id, environment)`,
		`movements_pool_seq_key UNIQUE (pool_id, seq, company_id, environment)`,
		`statistics CREATE STATISTICS pool.movements_pool_stats (dependencies) ON company_id, environment, pool_id FROM movements`,
	}
	testkit.AssertTableSchema(t, db, "after 02003", want, "movements", "company_id", "environment", "key", "pool_id")

	// Every row has its pool's pool_id, the expression the readers compute; pools differ.
	testkit.AssertTenantColumn(t, db, "movements", "pool_id", 3)

	// The constraints refuse a seq or a key repeated within a pool, and accept both in another.
	insert := func(id, company, env string, seq int, key string) error {
		_, err := db.Exec(ctx, `INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before,
                balance_after, status, created_at, key)
            VALUES ($1, $2, $3, $4, 'DEPOSIT', 1, 0, 1, 'CONFIRMED', now(), $5)`, id, company, env, seq, key)
		return err
	}
	if err := insert("00000000-0000-0000-0000-000000000010", "c1", "live", 2, "deposit:0xbb"); !pg.IsUniqueViolation(err, "movements_pool_seq_key") {
		t.Fatalf("a repeated seq: %v", err)
	}
	if err := insert("00000000-0000-0000-0000-000000000011", "c1", "live", 3, "debit:p-1"); !pg.IsUniqueViolation(err, "movements_pool_key_key") {
		t.Fatalf("a repeated key: %v", err)
	}
	if err := insert("00000000-0000-0000-0000-000000000012", "c2", "test", 1, "debit:p-1"); err != nil {
		t.Fatalf("another pool's seq and key: %v", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before,
            balance_after, status, created_at, key, pool_id)
        VALUES ('00000000-0000-0000-0000-000000000013', 'c3', 'live', 1, 'DEPOSIT', 1, 0, 1, 'CONFIRMED', now(), 'k', 1)`); err == nil {
		t.Fatal("a movement with a pool_id of the writer's choosing was accepted")
	}

	// The pool service's reads find the rows through pool_id.
	ms, err := adapters.Transactions(ctx, db, domain.ID{CompanyID: "c1", Environment: "live"})
	if err != nil || len(ms) != 2 || ms[0].Seq != 1 || ms[1].Seq != 2 {
		t.Fatalf("transactions of c1 live: %+v %v", ms, err)
	}
	if m, err := adapters.Transaction(ctx, db, domain.ID{CompanyID: "c2", Environment: "test"},
		uuid.MustParse("00000000-0000-0000-0000-000000000012")); err != nil || m.Seq != 1 {
		t.Fatalf("movement of c2 test: %+v %v", m, err)
	}

	// Down gives back the schema of 02002 with every row; Up again the schema of 02003.
	testkit.ExecGooseSection(t, db, migrations.FS, "02003_movement_pool_id.sql", "Down")
	testkit.AssertTableSchema(t, db, "after 02003 down", before, "movements", "company_id", "environment", "key", "pool_id")
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM movements`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("%d movements after 02003 down (%v)", n, err)
	}
	testkit.ExecGooseSection(t, db, migrations.FS, "02003_movement_pool_id.sql", "Up")
	testkit.AssertTableSchema(t, db, "after 02003 down and up", want, "movements", "company_id", "environment", "key", "pool_id")
}

// The planner knows that pool_id follows from company_id and environment (the statistics of
// migration 02003): filtered on all three, as every query is, a pool's rows are estimated as
// many as they are, not as many times fewer as there are pools (which would make it sort a
// whole pool for a page instead of walking the index).
func TestPoolRowsAreEstimatedWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := service.Options(service.Config{})
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: o.Migrations}), o.Schema)
	// 20 pools of 500 movements.
	if _, err := db.Exec(ctx, `
        INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before, balance_after, status,
            created_at, key)
        SELECT gen_random_uuid(), 'c' || (n % 20), 'live', n / 20 + 1, 'DEPOSIT', 1, n / 20, n / 20 + 1, 'CONFIRMED',
            now(), 'deposit:' || n
        FROM generate_series(0, 9999) n;
        ANALYZE movements`); err != nil {
		t.Fatal(err)
	}
	testkit.AssertTenantRowsEstimated(t, db, "movements", "pool_id", 500)
}
