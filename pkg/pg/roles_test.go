package pg_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/testkit"
)

func connectAs(t *testing.T, dsn, role string) *pgx.Conn {
	t.Helper()
	if role != "" {
		var err error
		if dsn, err = pg.WithUser(dsn, role); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connecting as %q: %v", role, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// denied fails the test unless sql is refused for lack of a privilege (42501).
func denied(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	_, err := conn.Exec(context.Background(), sql)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("%s as %s: want permission denied (42501), got %v", sql, conn.Config().User, err)
	}
}

// Issue 16 item 3: after Bootstrap each service's role owns its schema (objects made before
// the roles existed included), and a role reads another schema only where Roles says so, and
// never writes it.
func TestBootstrapMakesEachRoleOwnItsSchemaAndOnlyReadTheOthersItMay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testkit.NewDatabase(t)
	admin := connectAs(t, dsn, "")
	// A database laid out before per-service roles: the admin owns the merchant schema's objects.
	mustExec(t, admin, `CREATE SCHEMA merchant`)
	mustExec(t, admin, `CREATE TYPE merchant.mood AS ENUM ('calm')`)
	mustExec(t, admin, `CREATE TABLE merchant.merchants (id bigserial PRIMARY KEY, name text, m merchant.mood)`)
	mustExec(t, admin, `INSERT INTO merchant.merchants (name) VALUES ('old')`)
	mustExec(t, admin, `CREATE FUNCTION merchant.one() RETURNS int LANGUAGE sql AS 'SELECT 1'`)
	for range 2 { // idempotent
		if err := pg.Bootstrap(ctx, admin); err != nil {
			t.Fatal(err)
		}
	}
	var owners []string
	rows, err := admin.Query(ctx, `SELECT pg_get_userbyid(relowner) FROM pg_class
		WHERE relnamespace = 'merchant'::regnamespace
		UNION ALL SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE pronamespace = 'merchant'::regnamespace
		UNION ALL SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typnamespace = 'merchant'::regnamespace
		UNION ALL SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'merchant'`)
	if err != nil {
		t.Fatal(err)
	}
	if owners, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	for _, o := range owners {
		if o != "payplat_merchant" {
			t.Errorf("an object of schema merchant is owned by %s after Bootstrap: %v", o, owners)
			break
		}
	}

	// Each owner creates its tables, as its migrations do.
	merchant := connectAs(t, dsn, "payplat_merchant")
	mustExec(t, merchant, `CREATE TABLE merchant.ledger (id bigint PRIMARY KEY)`)
	mustExec(t, merchant, `INSERT INTO merchant.merchants (name) VALUES ('new')`)
	gatewayOwner := connectAs(t, dsn, "payplat_gateway")
	mustExec(t, gatewayOwner, `CREATE TABLE gateway.companies (id text PRIMARY KEY)`)
	payments := connectAs(t, dsn, "payplat_payments")
	mustExec(t, payments, `CREATE TABLE payments.payments (id text PRIMARY KEY)`)
	// Shadow schemas of a projection rebuild.
	mustExec(t, payments, `CREATE SCHEMA payments_shadow`)

	gateway := gatewayOwner
	for _, sql := range []string{`SELECT count(*) FROM merchant.merchants`, `SELECT count(*) FROM merchant.ledger`,
		`SELECT count(*) FROM payments.payments`, `SELECT merchant.one()`} {
		mustExec(t, gateway, sql)
	}
	for _, sql := range []string{
		`INSERT INTO merchant.merchants (name) VALUES ('x')`,
		`UPDATE merchant.merchants SET name = 'x'`,
		`DELETE FROM merchant.ledger`,
		`TRUNCATE merchant.ledger`,
		`SELECT * FROM merchant.merchants FOR SHARE`,
		`UPDATE payments.payments SET id = 'x'`,
		`CREATE TABLE merchant.mine (id int)`,
		`DROP TABLE merchant.ledger`,
		`ALTER TABLE payments.payments ADD COLUMN x int`,
	} {
		denied(t, gateway, sql)
	}
	pool := connectAs(t, dsn, "payplat_pool")
	mustExec(t, pool, `SELECT count(*) FROM gateway.companies`)
	denied(t, pool, `INSERT INTO gateway.companies VALUES ('x')`)
	denied(t, pool, `SELECT count(*) FROM payments.payments`)
	// Only the gateway and the pool read the merchant schema.
	denied(t, payments, `SELECT count(*) FROM merchant.merchants`)
	webhooks := connectAs(t, dsn, "payplat_webhooks")
	denied(t, webhooks, `SELECT count(*) FROM gateway.companies`)
}

// Parallel tests bootstrap their own databases on one server at once: the roles are shared.
func TestSeveralDatabasesOnOneServerCanBootstrapAtOnce(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	conns := make([]*pgx.Conn, len(errs))
	for i := range conns {
		conns[i] = connectAs(t, testkit.NewDatabase(t), "")
	}
	for i := range conns {
		wg.Go(func() {
			errs[i] = pg.Bootstrap(context.Background(), conns[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestWithUserSwapsTheUserDropsThePasswordAndRefusesBadRoles(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://admin:secret@127.0.0.1:5432/payplat?sslmode=disable": "postgres://payplat_pool@127.0.0.1:5432/payplat?sslmode=disable",
		"postgresql://127.0.0.1/db?user=admin&password=x":                "postgresql://payplat_pool@127.0.0.1/db",
		"host=127.0.0.1 dbname=payplat user=admin":                       "host=127.0.0.1 dbname=payplat user=admin user=payplat_pool password=''",
	} {
		got, err := pg.WithUser(in, "payplat_pool")
		if err != nil || got != want {
			t.Errorf("WithUser(%q) = %q, %v; want %q", in, got, err, want)
		}
		if cfg, err := pgx.ParseConfig(got); err != nil || cfg.User != "payplat_pool" || cfg.Password != "" {
			t.Errorf("%q parses as user %q password %q (%v)", got, cfg.User, cfg.Password, err)
		}
	}
	if _, err := pg.WithUser("postgres://127.0.0.1/db", "bad name"); err == nil || !strings.Contains(err.Error(), "invalid role") {
		t.Errorf("a bad role name: %v", err)
	}
}
