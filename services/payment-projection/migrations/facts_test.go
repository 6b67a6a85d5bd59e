package migrations

import (
	"context"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/domain"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// A database holding payment_facts (03001) gets every payment's facts in its row, the same facts
// (times to the microsecond, absent times absent), and no payment_facts table; moving them back
// (Down) restores the table row for row. One fact per fetch and one payment per write, so that a
// payment's facts span fetches.
func TestFactsMoveIntoThePaymentRows(t *testing.T) {
	batch, fetchRows = 1, 1
	ctx := context.Background()
	data, err := fs.ReadFile(files, "03001_payments.sql")
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{"03001_payments.sql": &fstest.MapFile{Data: data}}
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: Schema, Sources: []fs.FS{projection.Migrations, old}})
	db := testkit.NewPool(t, dsn, Schema)
	if _, err := db.Exec(ctx, `
        INSERT INTO payments (company_id, environment, payment_id, status, has_created, amount_micros, created_at, updated_at)
        VALUES ('c1', 'live', 'p1', 'CONFIRMED', true, 12500000, '2026-11-01T10:00:00Z', '2026-11-01T10:01:00Z'),
               ('c1', 'test', 'p1', 'CREATED', true, 1000000, '2026-11-01T11:00:00Z', '2026-11-01T11:00:00Z'),
               ('c2', 'live', 'p9', 'PROCESSING', false, 0, '2026-11-01T12:00:00Z', '2026-11-01T12:00:00Z');
        INSERT INTO payment_facts (company_id, environment, payment_id, event_id, rank, status, merchant_id, merchant_wallet,
            customer_wallet, amount_micros, tx_hash, block_explorer_url, error_message, created_at, expires_at, confirmed_at,
            expired_at, occurred_at)
        VALUES ('c1', 'live', 'p1', '00000000-0000-0000-0000-00000000000c', 5, 'CONFIRMED', 'm1', '0xm', '0xc', 12500000,
                '0xt', 'https://x/tx/0xt', '', NULL, NULL, '2026-11-01T10:01:00.123456Z', NULL, '2026-11-01T10:01:00Z'),
               ('c1', 'live', 'p1', '00000000-0000-0000-0000-00000000000a', 1, 'CREATED', 'm1', '0xm', '', 12500000,
                '', '', '', '2026-11-01T10:00:00Z', '2026-11-01T10:15:00Z', NULL, NULL, '2026-11-01T10:00:00Z'),
               ('c1', 'test', 'p1', '00000000-0000-0000-0000-00000000000b', 1, 'CREATED', 'm2', '0xm2', '', 1000000,
                '', '', '', '2026-11-01T11:00:00Z', '2026-11-01T11:15:00Z', NULL, NULL, '2026-11-01T11:00:00Z'),
               ('c2', 'live', 'p9', '00000000-0000-0000-0000-00000000000d', 3, 'PROCESSING', 'm3', '0xm3', '0xc3', 5000000,
                '0xt3', '', '', NULL, NULL, NULL, NULL, '2026-11-01T12:00:00Z');
        CREATE TABLE facts_before AS SELECT * FROM payment_facts`); err != nil {
		t.Fatal(err)
	}
	if err := migrate.Up(ctx, dsn, Set()); err != nil {
		t.Fatal(err)
	}
	var gone bool
	if err := db.QueryRow(ctx, `SELECT to_regclass('payment_facts') IS NULL`).Scan(&gone); err != nil || !gone {
		t.Fatalf("payment_facts still there (%v)", err)
	}
	rows, err := db.Query(ctx, `SELECT company_id, environment, payment_id, facts FROM payments ORDER BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for rows.Next() {
		var (
			k    domain.Key
			blob []byte
		)
		if err := rows.Scan(&k.CompanyID, &k.Environment, &k.PaymentID, &blob); err != nil {
			t.Fatal(err)
		}
		fs, err := adapters.DecodeFacts(k, blob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			s := f.EventID.String()[34:] + " " + f.Status + " " + f.MerchantID + " " + f.TxHash + " " + f.OccurredAt.Format("15:04:05.999999")
			if f.ConfirmedAt != nil {
				s += " confirmed " + f.ConfirmedAt.Format("15:04:05.999999")
			}
			if f.ExpiresAt != nil {
				s += " expires " + f.ExpiresAt.Format("15:04")
			}
			got[k.CompanyID+"/"+k.Environment+"/"+k.PaymentID] = append(got[k.CompanyID+"/"+k.Environment+"/"+k.PaymentID], s)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"c1/live/p1": {"0a CREATED m1  10:00:00 expires 10:15", "0c CONFIRMED m1 0xt 10:01:00 confirmed 10:01:00.123456"},
		"c1/test/p1": {"0b CREATED m2  11:00:00 expires 11:15"},
		"c2/live/p9": {"0d PROCESSING m3 0xt3 12:00:00"},
	}
	if len(got) != len(want) {
		t.Fatalf("facts after the migration: %v, want %v", got, want)
	}
	for k, w := range want {
		if len(got[k]) != len(w) {
			t.Fatalf("facts of %s: %q, want %q", k, got[k], w)
		}
		for i := range w {
			if got[k][i] != w[i] {
				t.Fatalf("facts of %s: %q, want %q", k, got[k], w)
			}
		}
	}

	cfg, err := pg.ParsePoolConfig(dsn, Schema)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDB(*cfg.ConnConfig)
	defer sqlDB.Close()
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := factsDown(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var differ int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ((SELECT * FROM facts_before EXCEPT ALL SELECT * FROM payment_facts)
        UNION ALL (SELECT * FROM payment_facts EXCEPT ALL SELECT * FROM facts_before)) d`).Scan(&differ); err != nil || differ != 0 {
		t.Fatalf("%d rows differ after moving the facts back (%v)", differ, err)
	}
}
