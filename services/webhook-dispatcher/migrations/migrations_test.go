package migrations_test

import (
	"context"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// upTo applies the schema's migrations numbered up to last (all of them for a last of 99).
func upTo(t *testing.T, dsn string, last string) {
	t.Helper()
	sub := fstest.MapFS{}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name[:5] > last {
			continue
		}
		data, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		sub[name] = &fstest.MapFile{Data: data}
	}
	if err := migrate.Up(context.Background(), dsn, migrate.Set{Schema: migrations.Schema,
		Sources: []fs.FS{projection.Migrations, sub}}); err != nil {
		t.Fatal(err)
	}
}

// 00003 rewrites the error messages stored before it into the fixed partner-visible ones: no
// address, no resolver answer, no refused-or-unknown distinction is left in the log.
func TestErrorMessagesBecomeGeneric(t *testing.T) {
	dsn := testkit.NewDatabase(t)
	upTo(t, dsn, "00002")
	db := testkit.NewPool(t, dsn, migrations.Schema)
	ctx := context.Background()
	if _, err := db.Exec(ctx, `INSERT INTO endpoints (id, company_id, environment, url, enabled, secret_sealed)
		VALUES (gen_random_uuid(), 'acme', 'test', 'https://hooks.example.com/', true, '\x00')`); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"endpoint answered HTTP 503":                                                          "HTTP 503",
		"endpoint answered HTTP 302 (redirects are not followed)":                             "HTTP 302 (redirects are not followed)",
		"timeout: no answer within 10s":                                                       "timed out",
		"dns: lookup db.internal on 10.0.0.2:53: no such host":                                "could not connect",
		"blocked address: 10.1.2.3 is a private address":                                      "could not connect",
		"connection refused":                                                                  "could not connect",
		"network error: dial tcp 203.0.113.9:443: connect: network is unreachable":            "could not connect",
		"connection reset by the endpoint":                                                    "no valid HTTP response",
		"network error: unexpected EOF":                                                       "no valid HTTP response",
		"tls: failed to verify certificate: x509: certificate is valid for a.internal, not b": "TLS error",
		"blocked address: only https endpoints are allowed":                                   "endpoint URL not allowed",
		"invalid endpoint url":                                                                "endpoint URL not allowed",
		"attempt cancelled (dispatcher shutting down)":                                        "attempt cancelled",
		"signing failed: boom":                                                                "signing failed",
		"signing secret unavailable":                                                          "signing secret unavailable",
		"webhook endpoint is disabled or has no url":                                          "webhook endpoint is disabled or has no url",
	}
	for old := range want {
		if _, err := db.Exec(ctx, `INSERT INTO deliveries (id, endpoint_id, company_id, environment, event_id,
			event_type, payload, status, attempts, error_message)
			SELECT gen_random_uuid(), id, company_id, environment, gen_random_uuid(), 'payment.created', '{}',
				'FAILED', 1, $1 FROM endpoints`, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO deliveries (id, endpoint_id, company_id, environment, event_id,
		event_type, payload, status, attempts) SELECT gen_random_uuid(), id, company_id, environment,
		gen_random_uuid(), 'payment.created', '{}', 'SUCCESS', 1 FROM endpoints`); err != nil {
		t.Fatal(err)
	}

	upTo(t, dsn, "99999")
	rows, err := db.Query(ctx, `SELECT error_message FROM deliveries ORDER BY error_message NULLS FIRST`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var nulls int
	for rows.Next() {
		var msg *string
		if err := rows.Scan(&msg); err != nil {
			t.Fatal(err)
		}
		if msg == nil {
			nulls++
			continue
		}
		got[*msg]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	wantCount := map[string]int{}
	for _, v := range want {
		wantCount[v]++
	}
	if nulls != 1 || len(got) != len(wantCount) {
		t.Fatalf("after the migration: %v and %d without a message, want %v and 1", got, nulls, wantCount)
	}
	for msg, n := range wantCount {
		if got[msg] != n {
			t.Errorf("%q: %d entries, want %d (all: %v)", msg, got[msg], n, got)
		}
	}
}
