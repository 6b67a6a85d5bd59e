package e2e_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/pg"
)

// Issue 16 item 3, on the running platform: each service is connected as its own role, and a
// role cannot write (or, where it has no business, read) another service's tables. That every
// other test of this package passes with the services on these roles shows each works with only
// its own privileges.
func TestEachServiceRunsAsItsOwnDatabaseRole(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := context.Background()
	// A merchant, so the tables the statements below aim at have rows.
	company := s.newCompany("Roles Co")
	s.createMerchant(company.keys["sk_test"], "Role Shop")

	admin, err := pgx.Connect(ctx, s.creds.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	rows, err := admin.Query(ctx, `SELECT DISTINCT usename::text FROM pg_stat_activity
		WHERE datname = current_database() AND usename LIKE 'payplat\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	users, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range pg.Roles {
		if !slices.Contains(users, o.Owner) {
			t.Errorf("no connection of role %s (connected roles: %v)", o.Owner, users)
		}
	}

	as := func(role string) *pgx.Conn {
		dsn, err := pg.WithUser(s.creds.DatabaseURL, role)
		if err != nil {
			t.Fatal(err)
		}
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(ctx) })
		return c
	}
	refused := func(c *pgx.Conn, sql string) {
		t.Helper()
		_, err := c.Exec(ctx, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("as %s, %s: want permission denied (42501), got %v", c.Config().User, sql, err)
		}
	}
	gateway := as("payplat_gateway")
	for _, sql := range []string{
		`UPDATE merchant.merchants SET status = 'ACTIVE'`,
		`INSERT INTO merchant.merchant_ledger SELECT * FROM merchant.merchant_ledger`,
		`DELETE FROM merchant.events`,
		`SELECT id FROM merchant.merchants FOR SHARE`,
		`UPDATE pool.balances SET balance = balance + 1`,
		`DELETE FROM payments.payments`,
		`UPDATE webhooks.endpoints SET url = 'https://attacker.example'`,
		`TRUNCATE webhooks.deliveries`,
	} {
		refused(gateway, sql)
	}
	// What the gateway reads, it may read; the merchant's lock function is its one way to a row lock.
	for _, sql := range []string{`SELECT count(*) FROM merchant.merchants`, `SELECT count(*) FROM pool.balances`,
		`SELECT count(*) FROM payments.payments`, `SELECT count(*) FROM webhooks.deliveries`} {
		if _, err := gateway.Exec(ctx, sql); err != nil {
			t.Errorf("as payplat_gateway, %s: %v", sql, err)
		}
	}
	refused(as("payplat_pool"), `UPDATE gateway.companies SET name = 'x'`)
	refused(as("payplat_merchant"), `SELECT count(*) FROM webhooks.endpoints`)
	refused(as("payplat_webhooks"), `SELECT count(*) FROM gateway.api_keys`)
	refused(as("payplat_payments"), `UPDATE merchant.merchants SET balance_micros = 0`)
}
