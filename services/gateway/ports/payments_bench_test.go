package ports_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/service"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
)

// BenchmarkPaymentsList measures GET /payments?limit=50 through the real gateway over
// 1,000,000 payments of one company (inserted directly into the payments read table, 100
// merchants), with 4 × GOMAXPROCS concurrent clients, beside "bare": the same two queries
// (page, merchant names) in a minimal pgx + net/http handler, the ceiling the gateway is
// compared with. It reports requests per second and the p99 latency.
//
//	cd services/gateway && go test -run '^$' -bench PaymentsList -benchtime 5s ./ports/
func BenchmarkPaymentsList(b *testing.B) {
	dsn := testkit.NewDatabase(b, migrations.Set(), merchantmigrations.Set(), paymentmigrations.Set())
	admin := randomToken()
	cfg, err := service.LoadFrom(map[string]string{"DATABASE_URL": dsn, "NATS_URL": testkit.NATS(b),
		"GATEWAY_ADDR": "127.0.0.1:0", "HEALTH_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": admin, "IDEMPOTENCY_SECRET": admin})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gw, err := service.New(ctx, cfg, service.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = gw.Run(ctx) }()
	company, key := benchCompany(b, gw.URL(), admin)
	db := testkit.NewPool(b, dsn, "public")
	for _, sql := range []string{
		`INSERT INTO merchant.merchants (id, company_id, environment, name, email, wallet_address, wallet_user_id,
            status, version, created_at, updated_at)
         SELECT md5('m' || n)::uuid, $1, 'test', 'Merchant ' || n, 'm' || n || '@example.com', '0xw' || n, 'u' || n,
            'ACTIVE', 1, now(), now() FROM generate_series(1, 100) AS n`,
		`INSERT INTO payments.payments (company_id, environment, payment_id, status, has_created, merchant_id,
            merchant_wallet, amount_micros, tx_hash, created_at, expires_at, confirmed_at)
         SELECT $1, 'test', md5('p' || n)::uuid::text, (ARRAY['CREATED','PROCESSING','CONFIRMED','FAILED'])[1 + n % 4],
            true, md5('m' || (1 + n % 100))::uuid::text, '0xw', 12500000, '0x' || md5('t' || n) || md5('u' || n),
            now() - n * interval '1 second', now() + interval '1 hour', now()
         FROM generate_series(1::bigint, 1000000::bigint) AS n`,
		`ANALYZE payments.payments`,
		`ANALYZE merchant.merchants`,
	} {
		var args []any
		if containsParam(sql) {
			args = []any{company}
		}
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			b.Fatal(err)
		}
	}
	bare := httptest.NewServer(bareListHandler(db, company))
	defer bare.Close()
	b.Run("gateway", func(b *testing.B) { benchGet(b, gw.URL()+paymentsPath+"?limit=50", key) })
	b.Run("gateway-status", func(b *testing.B) { benchGet(b, gw.URL()+paymentsPath+"?limit=50&status=CONFIRMED", key) })
	b.Run("bare", func(b *testing.B) { benchGet(b, bare.URL, key) })
}

func containsParam(sql string) bool { return strings.Contains(sql, "$1") }

// bareListHandler is the ceiling: the gateway's two queries and a JSON answer, without routing,
// authentication, idempotency, logging or metrics.
func bareListHandler(db *pgxpool.Pool, company string) http.HandlerFunc {
	type row struct {
		ID, Status, Merchant, Name, Tx string
		Amount                         int64
		Created, Expires, Confirmed    *time.Time
	}
	return func(w http.ResponseWriter, r *http.Request) {
		rows, err := db.Query(r.Context(), `SELECT payment_id, public_status, merchant_id, tx_hash, amount_micros,
                created_at, expires_at, confirmed_at FROM payments.payments
            WHERE tenant_id = hashtextextended($1::text || '/test', 0) AND company_id = $1 AND environment = 'test'
            ORDER BY created_at DESC, payment_id DESC LIMIT 51`, company)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		list, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (row, error) {
			var x row
			err := cr.Scan(&x.ID, &x.Status, &x.Merchant, &x.Tx, &x.Amount, &x.Created, &x.Expires, &x.Confirmed)
			return x, err
		})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		ids := make([]string, len(list))
		for i, x := range list {
			ids[i] = x.Merchant
		}
		names := map[string]string{}
		nrows, err := db.Query(r.Context(), `SELECT id::text, name FROM merchant.merchants WHERE id = ANY($1::uuid[])`, ids)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		var id, name string
		if _, err := pgx.ForEachRow(nrows, []any{&id, &name}, func() error { names[id] = name; return nil }); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		for i := range list {
			list[i].Name = names[list[i].Merchant]
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"payments": list[:50], "pagination": map[string]any{"limit": 50, "has_more": true}})
	}
}
