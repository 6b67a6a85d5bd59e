package commands_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/testkit"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
)

// `payplat-ctl db roles` on a database laid out before per-service roles (the merchant schema
// migrated by the admin) hands the schema and its tables to payplat_merchant, and is idempotent.
func TestDBRolesLaysOutTheServiceRoles(t *testing.T) {
	t.Parallel()
	dsn := testkit.NewDatabase(t, merchantmigrations.Set())
	for range 2 {
		out, stderr, err := ctl(t, map[string]string{"DATABASE_URL": dsn}, "db", "roles")
		if err != nil || !strings.Contains(out, "merchant: owned by payplat_merchant, read by [payplat_gateway payplat_pool]") {
			t.Fatalf("db roles: %v\n%s%s", err, out, stderr)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var schemaOwner, tableOwner string
	if err := conn.QueryRow(ctx, `SELECT nspowner::regrole::text, (SELECT relowner::regrole::text FROM pg_class
		WHERE oid = 'merchant.merchants'::regclass) FROM pg_namespace WHERE nspname = 'merchant'`).Scan(&schemaOwner, &tableOwner); err != nil {
		t.Fatal(err)
	}
	if schemaOwner != "payplat_merchant" || tableOwner != "payplat_merchant" {
		t.Fatalf("merchant schema owned by %s, merchant.merchants by %s", schemaOwner, tableOwner)
	}
	if _, _, err := ctl(t, map[string]string{}, "db", "roles"); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("without DATABASE_URL: %v", err)
	}
}
