package migrations_test

import (
	"context"
	"os"
	"testing"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// The schema itself enforces the key invariants, whatever code writes to it.
func TestSchemaItselfRefusesDuplicateOrInvalidKeysAndShortNames(t *testing.T) {
	t.Parallel()
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrations.Set()), migrations.Schema)
	ctx := context.Background()
	const company = "7d9c3f0e-4b1a-4c55-9a57-1f0d6c3b2a10"
	if _, err := db.Exec(ctx, `INSERT INTO companies (id, name) VALUES ($1, 'Acme')`, company); err != nil {
		t.Fatal(err)
	}
	insertKey := func(kind, env string, hashByte int, revoked bool) error {
		_, err := db.Exec(ctx, `INSERT INTO api_keys (id, company_id, kind, environment, display_prefix, key_hash, revoked_at)
			VALUES (gen_random_uuid(), $1, $2, $3, 'sk_test_abcd', sha256(int4send($4)),
			        CASE WHEN $5 THEN now() END)`, company, kind, env, hashByte, revoked)
		return err
	}
	if err := insertKey("secret", "test", 1, false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		err        error
		constraint string
	}{
		{"second active key of a type", insertKey("secret", "test", 2, false), "api_keys_one_active_idx"},
		{"same hash twice", insertKey("secret", "live", 1, true), "api_keys_key_hash_key"},
	}
	for _, tt := range tests {
		if !pg.IsUniqueViolation(tt.err, tt.constraint) {
			t.Errorf("%s: %v, want unique violation on %s", tt.name, tt.err, tt.constraint)
		}
	}
	if err := insertKey("secret", "test", 3, true); err != nil {
		t.Errorf("revoked key of an active type: %v", err)
	}
	for _, bad := range [][2]string{{"root", "test"}, {"secret", "prod"}} {
		if err := insertKey(bad[0], bad[1], 4, false); err == nil {
			t.Errorf("kind %s environment %s accepted", bad[0], bad[1])
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO companies (id, name) VALUES (gen_random_uuid(), 'A')`); err == nil {
		t.Error("one-character company name accepted")
	}
}
