package migrations

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"
)

// setBefore3003 is the migration set of the payments schema as it was before 3003: 03001 and
// the Go migration 3002.
func setBefore3003(t *testing.T) migrate.Set {
	t.Helper()
	data, err := fs.ReadFile(files, "03001_payments.sql")
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{"03001_payments.sql": &fstest.MapFile{Data: data}}
	return migrate.Set{Schema: Schema, Sources: []fs.FS{projection.Migrations,
		migrate.GoSource{FS: old, Go: []*goose.Migration{factsIntoPayments()}}}}
}

// listOrder is every payment of the table as company/environment/id, in the order of the
// gateway's list (newest first, then payment id descending), tenant after tenant. Not a
// prepared statement: 3003 changes the collation of its result, which a statement prepared
// before (by the first call) would refuse once ("cached plan must not change result type").
func listOrder(t *testing.T, db *pgxpool.Pool) string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT company_id || '/' || environment || '/' || payment_id
        FROM payments ORDER BY company_id, environment, created_at DESC, payment_id DESC`, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(ids, " ")
}

// Migration 3003 leads the indexes of payments with tenant_id, a generated 64-bit hash of the
// company id and environment: a database holding payments gets it on every row (the same for
// the rows of one tenant), the primary key keeps refusing exactly what it refused (a payment id
// repeated within a tenant) and accepting what it accepted (the same payment id in another
// company or environment), writers cannot set tenant_id, and the list keeps its order (payment
// ids compared bytewise, as the database's C.UTF-8 collation orders them). Its Down section
// gives back the schema of 3002, rows intact.
func TestPaymentsAreIndexedByTenantID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testkit.NewDatabase(t, setBefore3003(t))
	db := testkit.NewPool(t, dsn, Schema)
	before := testkit.TableSchema(t, db, "payments", "company_id", "environment", "payment_id", "tenant_id")
	// Payment ids are any tokens: ties on created_at ordered by ids with upper and lower case,
	// punctuation and characters beyond ASCII.
	if _, err := db.Exec(ctx, `
        INSERT INTO payments (company_id, environment, payment_id, status, has_created, amount_micros, created_at, facts)
        VALUES ('c1', 'live', 'p1', 'CONFIRMED', true, 12500000, '2026-11-01T10:00:00Z', '\x0a01'),
               ('c1', 'live', 'P2', 'CREATED', true, 1000000, '2026-11-01T10:00:00Z', ''),
               ('c1', 'live', 'p-3', 'FAILED', true, 1000000, '2026-11-01T10:00:00Z', ''),
               ('c1', 'live', 'é4', 'EXPIRED', true, 1000000, '2026-11-01T10:00:00Z', ''),
               ('c1', 'live', '_5', 'CONFIRMED', true, 1000000, '2026-11-01T09:00:00Z', ''),
               ('c1', 'test', 'p1', 'CREATED', true, 1000000, '2026-11-01T11:00:00Z', ''),
               ('c2', 'live', 'p1', 'PROCESSING', false, 0, '2026-11-01T12:00:00Z', '')`); err != nil {
		t.Fatal(err)
	}
	orderBefore := listOrder(t, db)
	if err := migrate.Up(ctx, dsn, Set()); err != nil {
		t.Fatal(err)
	}

	want := []string{
		`CREATE INDEX payments_expiry_idx ON payments.payments USING btree (expires_at) WHERE ((status = 'CREATED'::text) AND has_created AND (expiry_published_at IS NULL))`,
		`CREATE INDEX payments_list_confirmed_idx ON payments.payments USING btree (tenant_id, created_at DESC, payment_id DESC) WHERE (public_status = 'CONFIRMED'::text)`,
		`CREATE INDEX payments_list_failed_idx ON payments.payments USING btree (tenant_id, created_at DESC, payment_id DESC) WHERE (public_status = 'FAILED'::text)`,
		`CREATE INDEX payments_list_idx ON payments.payments USING btree (tenant_id, created_at DESC, payment_id DESC)`,
		`CREATE INDEX payments_list_pending_idx ON payments.payments USING btree (tenant_id, created_at DESC, payment_id DESC) WHERE (public_status = 'PENDING'::text)`,
		`CREATE UNIQUE INDEX payments_pkey ON payments.payments USING btree (tenant_id, payment_id, company_id, environment)`,
		`column company_id text NOT NULL`,
		`column environment text NOT NULL`,
		`column payment_id text COLLATE "C" NOT NULL`,
		`column tenant_id bigint NOT NULL GENERATED hashtextextended(((company_id || '/'::text) || environment), (0)::bigint)`,
		`payments_pkey PRIMARY KEY (tenant_id, payment_id, company_id, environment)`,
		`statistics CREATE STATISTICS payments.payments_tenant_stats (dependencies) ON company_id, environment, tenant_id FROM payments`,
	}
	testkit.AssertTableSchema(t, db, "after 3003", want, "payments", "company_id", "environment", "payment_id", "tenant_id")

	// Every row has its tenant's tenant_id, the expression the readers compute; tenants differ.
	testkit.AssertTenantColumn(t, db, "payments", "tenant_id", 3)
	var facts []byte
	if err := db.QueryRow(ctx, `SELECT facts FROM payments
        WHERE tenant_id = hashtextextended('c1'::text || '/' || 'live'::text, 0) AND company_id = 'c1' AND environment = 'live'
            AND payment_id = 'p1'`).Scan(&facts); err != nil || string(facts) != "\x0a\x01" {
		t.Fatalf("facts of c1/live/p1 after 3003: %x %v", facts, err)
	}
	// The list order is the database collation's: unchanged where it is C or C.UTF-8 (code
	// point order, the order of the UTF-8 bytes), as on every database of this platform.
	var collation string
	if err := db.QueryRow(ctx, `SELECT datcollate FROM pg_database WHERE datname = current_database()`).Scan(&collation); err != nil {
		t.Fatal(err)
	}
	switch orderAfter := listOrder(t, db); {
	case collation == "C" || collation == "POSIX" || strings.EqualFold(collation, "C.UTF-8") || strings.EqualFold(collation, "C.utf8"):
		if orderAfter != orderBefore {
			t.Fatalf("list order after 3003: %s\nbefore: %s", orderAfter, orderBefore)
		}
	default:
		t.Logf("database collation %s: list order before 3003 %s, after %s", collation, orderBefore, orderAfter)
	}

	// The primary key refuses a payment id repeated within a tenant and accepts it in another
	// company or environment; the projector's conflict target still finds the row.
	insert := func(company, env, id string) error {
		_, err := db.Exec(ctx, `INSERT INTO payments (company_id, environment, payment_id) VALUES ($1, $2, $3)`,
			company, env, id)
		return err
	}
	if err := insert("c1", "live", "p1"); !pg.IsUniqueViolation(err, "payments_pkey") {
		t.Fatalf("a repeated payment id: %v", err)
	}
	if err := insert("c3", "live", "p1"); err != nil {
		t.Fatalf("a payment id of another company: %v", err)
	}
	if err := insert("c2", "test", "p1"); err != nil {
		t.Fatalf("a payment id of another environment: %v", err)
	}
	var status string
	if err := db.QueryRow(ctx, `INSERT INTO payments (company_id, environment, payment_id) VALUES ('c1', 'live', 'p1')
        ON CONFLICT (tenant_id, payment_id, company_id, environment) DO UPDATE SET updated_at = payments.updated_at
        RETURNING status`).Scan(&status); err != nil || status != "CONFIRMED" {
		t.Fatalf("upsert of an existing payment: %q %v", status, err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO payments (company_id, environment, payment_id, tenant_id)
        VALUES ('c4', 'live', 'p1', 1)`); err == nil {
		t.Fatal("a payment with a tenant_id of the writer's choosing was accepted")
	}

	// Down gives back the schema of 3002 with every row; Up again the schema of 3003.
	testkit.ExecGooseSection(t, db, files, "03003_payments_tenant_id.sql", "Down")
	testkit.AssertTableSchema(t, db, "after 3003 down", before, "payments", "company_id", "environment", "payment_id", "tenant_id")
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM payments`).Scan(&n); err != nil || n != 9 {
		t.Fatalf("%d payments after 3003 down (%v)", n, err)
	}
	if err := insert("c1", "live", "p1"); !pg.IsUniqueViolation(err, "payments_pkey") {
		t.Fatalf("a repeated payment id after 3003 down: %v", err)
	}
	testkit.ExecGooseSection(t, db, files, "03003_payments_tenant_id.sql", "Up")
	testkit.AssertTableSchema(t, db, "after 3003 down and up", want, "payments", "company_id", "environment", "payment_id", "tenant_id")
}

// The planner knows that tenant_id follows from company_id and environment (the statistics of
// migration 3003): filtered on all three, as every query is, a tenant's payments are estimated
// as many as they are, not as many times fewer as there are tenants (which would make it sort
// a whole tenant for a page instead of walking the index).
func TestTenantRowsAreEstimatedWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.NewPool(t, testkit.NewDatabase(t, Set()), Schema)
	// 20 tenants of 500 payments.
	if _, err := db.Exec(ctx, `
        INSERT INTO payments (company_id, environment, payment_id, status, created_at)
        SELECT 'c' || (n % 20), 'live', 'p' || n, 'CONFIRMED', now() - n * interval '1 s'
        FROM generate_series(0, 9999) n;
        ANALYZE payments`); err != nil {
		t.Fatal(err)
	}
	testkit.AssertTenantRowsEstimated(t, db, "payments", "tenant_id", 500)
}
