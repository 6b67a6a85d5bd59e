package dashboard_test

import (
	"crypto/md5"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	merchantv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant/v1"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
	poolservice "github.com/payplat/platform/services/pool/service"
	webhookmigrations "github.com/payplat/platform/services/webhook-dispatcher/migrations"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// BenchmarkDashboardPages times every dashboard page, signed in, through the real gateway
// (service.New: routing, session lookup, the API's services) over one company with 10,000
// merchants, 1,000,000 payments, 1,000,000 pool movements, 200,000 webhook deliveries and a
// merchant with 10,000 ledger entries, all inserted straight into the read tables. Each page is
// requested b.N times in a row by one client; it reports the p50 and p99 of the server's
// answer as seen by the client over loopback (issue 18: p99 < 100 ms).
//
//	make bench-dashboard   # go test -run '^$' -bench DashboardPages -benchtime 200x ./services/gateway/dashboard/
func BenchmarkDashboardPages(b *testing.B) {
	po := poolservice.Options(poolservice.Config{})
	dsn := testkit.NewDatabase(b, migrations.Set(), merchantmigrations.Set(), paymentmigrations.Set(),
		migrate.Set{Schema: po.Schema, Sources: po.Migrations},
		migrate.Set{Schema: webhookmigrations.Schema, Sources: []fs.FS{projection.Migrations, webhookmigrations.FS}})
	base, company, key := gatewaytest.RunWithCompany(b, dsn, "Bench Ltd")
	ids := seedDashboard(b, dsn, company)
	client := signIn(b, base, key)
	pages := []struct{ name, path string }{
		{"overview", "/dashboard/"},
		{"merchants", "/dashboard/merchants"},
		{"merchants-last-page", "/dashboard/merchants?page=400"},
		{"merchant-ledger", "/dashboard/merchants/" + ids.merchant},
		{"merchant-ledger-last-page", "/dashboard/merchants/" + ids.merchant + "?page=400"},
		{"pool", "/dashboard/pool"},
		{"pool-debits-page-100", "/dashboard/pool?type=DEBIT&page=100"},
		{"payments", "/dashboard/payments"},
		{"payments-confirmed", "/dashboard/payments?status=CONFIRMED"},
		{"payments-page-100", "/dashboard/payments?page=100"},
		{"payment", "/dashboard/payments/" + ids.payment},
		{"webhooks", "/dashboard/webhooks"},
		{"webhooks-failed", "/dashboard/webhooks?status=FAILED"},
		{"delivery", "/dashboard/webhooks/deliveries/" + ids.delivery},
		{"developers", "/dashboard/developers"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) { benchPage(b, client, base+p.path) })
	}
}

// benchPage requests url b.N times and reports the latency percentiles.
func benchPage(b *testing.B, client *http.Client, url string) {
	get := func() time.Duration {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(resp.Request.URL.Path, "/signin") {
			b.Fatalf("%s: %d at %s", url, resp.StatusCode, resp.Request.URL)
		}
		return time.Since(start)
	}
	get() // warm: prepared statements, plans
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		took = append(took, get())
	}
	b.StopTimer()
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(float64(len(took))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}

type seeded struct{ merchant, payment, delivery string }

// seedDashboard fills the read tables of company's test environment.
func seedDashboard(b *testing.B, dsn, company string) seeded {
	db := testkit.NewPool(b, dsn, "public")
	ids := seeded{merchant: uuidOf("m1"), payment: uuidOf("p1"), delivery: uuidOf("d1")}
	gatewaytest.Seed(b, db, company,
		`INSERT INTO merchant.merchants (id, company_id, environment, name, email, wallet_address, wallet_user_id,
            status, version, created_at, updated_at)
         SELECT md5('m' || n)::uuid, $1, 'test', 'Merchant ' || n, 'm' || n || '@example.com',
            '0x' || substr(md5('w' || n) || md5('x' || n), 1, 40), 'u' || n,
            CASE WHEN n > 9995 THEN 'FROZEN' WHEN n % 10 = 0 THEN 'PAUSED' ELSE 'ACTIVE' END, 1,
            now() - (10001 - n) * interval '1 minute', now() FROM generate_series(1, 10000) AS n`,
		`INSERT INTO merchant.merchant_ledger (id, merchant_id, seq, type, amount_micros, balance_before_micros,
            balance_after_micros, payment_id, status, description, source_key, created_at)
         SELECT md5('l' || n)::uuid, md5('m1')::uuid, n, 'PAYMENT', 1000000, (n - 1) * 1000000::bigint, n * 1000000::bigint,
            md5('p' || n)::uuid::text, 'COMPLETED', 'Payment', 'p' || n, now() - (10001 - n) * interval '1 second'
         FROM generate_series(1, 10000) AS n`,
		gatewaytest.PaymentsSQL(10000),
		`INSERT INTO pool.movements (id, company_id, environment, seq, type, amount, balance_before, balance_after,
            status, tx_hash, description, payment_id, payment_amount, merchant_id, merchant_name, created_at, confirmed_at,
            key)
         SELECT gen_random_uuid(), $1, 'test', n, 'DEBIT', -1000000, 2000000000000 - (n - 1) * 1000000,
            2000000000000 - n * 1000000, 'CONFIRMED', '0xhash' || n, 'Payment p-' || n || ' to Merchant 1',
            md5('p' || n)::uuid::text, 1000000, md5('m1')::uuid::text, 'Merchant 1', now() - (1000001 - n) * interval '1 second',
            now(), 'debit:p-' || n
         FROM generate_series(1::bigint, 1000000::bigint) AS n`,
		`INSERT INTO pool.balances (company_id, environment, balance, low_threshold, version, movement_count, debit_count)
         VALUES ($1, 'test', 1000000000000, 100000000, 1000000, 1000000, 1000000)`,
		`INSERT INTO webhooks.endpoints (id, company_id, environment, url, enabled, secret_sealed)
         VALUES (md5('e')::uuid, $1, 'test', 'https://example.com/hooks', true, '\x00')`,
		`INSERT INTO webhooks.deliveries (id, endpoint_id, company_id, environment, event_id, event_type, payload,
            status, attempts, last_attempt_at, next_attempt_at, response_status, response_body, created_at)
         SELECT md5('d' || n)::uuid, md5('e')::uuid, $1, 'test', md5('ev' || n)::uuid, 'payment.confirmed',
            convert_to('{"event":"payment.confirmed","data":{}}', 'UTF8'),
            CASE WHEN n % 50 = 0 THEN 'FAILED' ELSE 'SUCCESS' END, 1, now(),
            CASE WHEN n % 50 = 0 THEN now() + interval '5 minutes' END,
            CASE WHEN n % 50 = 0 THEN 500 ELSE 200 END, 'ok', now() - n * interval '1 second'
         FROM generate_series(1, 200000) AS n`,
		`ANALYZE`,
	)
	// The frozen merchants' reasons live in their merchant.status_changed events.
	for n := 9996; n <= 10000; n++ {
		id := uuidOf(fmt.Sprintf("m%d", n))
		payload, err := events.Marshal(&merchantv1.MerchantStatusChanged{
			Meta: &commonv1.EventMeta{EventId: uuid.NewString(), CompanyId: company, Environment: "test"}, MerchantId: id,
			FromStatus: "ACTIVE", ToStatus: "FROZEN", Actor: "platform", Reason: "chargeback investigation"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(b.Context(), `INSERT INTO merchant.events (event_id, stream_id, stream_version, event_type, subject,
                company_id, environment, occurred_at, payload)
            VALUES (gen_random_uuid(), 'merchant-' || $1, 2, 'merchant.status_changed', 'merchant.test.x.status_changed',
                $2, 'test', now(), $3)`, id, company, payload); err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// uuidOf is md5(s)::uuid, as the seeding statements name rows.
func uuidOf(s string) string {
	return uuid.UUID(md5Sum(s)).String()
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in through the sign-in form and returns a client holding the session cookie.
func signIn(b *testing.B, base, key string) *http.Client {
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.Get(base + "/dashboard/signin")
	if err != nil {
		b.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if m == nil {
		b.Fatal("no CSRF token on the sign-in page")
	}
	resp, err = client.PostForm(base+"/dashboard/signin", url.Values{"key": {key}, "csrf": {string(m[1])}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/dashboard/" {
		b.Fatalf("sign-in ended at %s", resp.Request.URL)
	}
	return client
}

func md5Sum(s string) [16]byte { return md5.Sum([]byte(s)) }
