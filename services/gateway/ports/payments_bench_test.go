package ports_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
)

// BenchmarkPaymentsList measures GET /payments?limit=50 through the real gateway over
// 1,000,000 payments of one company (inserted directly into the payments read table, 100
// merchants), with 4 × GOMAXPROCS concurrent clients, beside "bare": the same two queries
// (page, merchant names) in a minimal pgx + net/http handler, the ceiling the gateway is
// compared with. It reports requests per second and the p99 latency.
//
//	cd services/gateway && go test -run '^$' -bench PaymentsList -benchtime 5s ./ports/
func BenchmarkPaymentsList(b *testing.B) {
	dsn := testkit.NewDatabase(b, paymentSchemas()...)
	url, company, key := gatewaytest.RunWithCompany(b, dsn, "Hot Pool Ltd")
	db := testkit.NewPool(b, dsn, "public")
	gatewaytest.Seed(b, db, company,
		`INSERT INTO merchant.merchants (id, company_id, environment, name, email, wallet_address, wallet_user_id,
            status, version, created_at, updated_at)
         SELECT md5('m' || n)::uuid, $1, 'test', 'Merchant ' || n, 'm' || n || '@example.com', '0xw' || n, 'u' || n,
            'ACTIVE', 1, now(), now() FROM generate_series(1, 100) AS n`,
		gatewaytest.PaymentsSQL(100),
		`ANALYZE payments.payments`,
		`ANALYZE merchant.merchants`,
	)
	bare := httptest.NewServer(bareListHandler(db, company))
	defer bare.Close()
	b.Run("gateway", func(b *testing.B) { benchGet(b, url+paymentsPath+"?limit=50", key) })
	b.Run("gateway-status", func(b *testing.B) { benchGet(b, url+paymentsPath+"?limit=50&status=CONFIRMED", key) })
	b.Run("bare", func(b *testing.B) { benchGet(b, bare.URL, key) })
}

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
