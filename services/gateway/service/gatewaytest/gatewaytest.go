// Package gatewaytest runs the real gateway service for the tests and benchmarks of the
// gateway's packages: ports and dashboard test from packages of their own, which cannot share
// helpers written in _test.go files.
package gatewaytest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/service"
)

// Quiet makes the service log nowhere: tests read answers, not logs.
var Quiet = service.WithLogger(slog.New(slog.DiscardHandler))

// Run starts the gateway service (service.New, then Run) on the configuration env gives
// (DATABASE_URL, NATS_URL, secrets, ...; both listeners on loopback ports the system picks
// unless env names them), tune applied after loading, and stops it when the test ends, failing
// the test unless Run then returns nil. The listener is bound on return, and served soon after.
func Run(tb testing.TB, env map[string]string, tune ...func(*service.Config)) *service.Service {
	tb.Helper()
	environ := map[string]string{"GATEWAY_ADDR": "127.0.0.1:0", "HEALTH_ADDR": "127.0.0.1:0"}
	maps.Copy(environ, env)
	cfg, err := service.LoadFrom(environ)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range tune {
		f(&cfg)
	}
	gw, err := service.New(context.Background(), cfg, Quiet)
	if err != nil {
		tb.Fatal(err)
	}
	stop := testkit.RunInBackground(gw.Run)
	tb.Cleanup(func() {
		if err := stop(); err != nil {
			tb.Errorf("gateway: %v", err)
		}
	})
	return gw
}

// RunWithCompany runs the gateway on dsn and a NATS server of its own with a fresh admin token,
// as the benchmarks over read tables they fill themselves do, and creates the company called
// name; it returns the gateway's URL, the company's id and its test secret key.
func RunWithCompany(tb testing.TB, dsn, name string) (url, company, key string) {
	tb.Helper()
	admin := Token()
	gw := Run(tb, map[string]string{"DATABASE_URL": dsn, "NATS_URL": testkit.NATS(tb), "ADMIN_TOKEN": admin,
		"IDEMPOTENCY_SECRET": admin})
	company, key = CreateCompany(tb, gw.URL(), admin, name)
	return gw.URL(), company, key
}

// CreateCompany creates the company called name through the admin API at base and returns its
// id and its test secret key. It retries while the connection fails: the listener is bound
// before Run serves it.
func CreateCompany(tb testing.TB, base, admin, name string) (id, key string) {
	tb.Helper()
	body, _ := json.Marshal(map[string]string{"name": name})
	var resp *http.Response
	var err error
	for range 100 {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/admin/companies", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Company struct{ ID string }
		Keys    map[string]string
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		tb.Fatalf("creating company: %d %v", resp.StatusCode, err)
	}
	return out.Company.ID, out.Keys["sk_test"]
}

// Seed runs statements on db in order, each given company as $1 when it has a $1, as
// benchmarks fill the read tables of a company's test environment straight in SQL.
func Seed(tb testing.TB, db *pgxpool.Pool, company string, statements ...string) {
	tb.Helper()
	for _, sql := range statements {
		var args []any
		if strings.Contains(sql, "$1") {
			args = []any{company}
		}
		if _, err := db.Exec(context.Background(), sql, args...); err != nil {
			tb.Fatalf("seeding: %v\n%s", err, sql)
		}
	}
}

// PaymentsSQL is the statement (for Seed) that gives the company 1,000,000 test payments, a
// second apart, in the four statuses in turn, spread over its merchants md5('m' || k)::uuid for k
// in 1..merchants.
func PaymentsSQL(merchants int) string {
	return fmt.Sprintf(`INSERT INTO payments.payments (company_id, environment, payment_id, status, has_created,
            merchant_id, merchant_wallet, amount_micros, tx_hash, created_at, expires_at, confirmed_at)
         SELECT $1, 'test', md5('p' || n)::uuid::text, (ARRAY['CREATED','PROCESSING','CONFIRMED','FAILED'])[1 + n %% 4],
            true, md5('m' || (1 + n %% %d))::uuid::text, '0xw', 12500000, '0x' || md5('t' || n) || md5('u' || n),
            now() - n * interval '1 second', now() + interval '1 hour', now()
         FROM generate_series(1::bigint, 1000000::bigint) AS n`, merchants)
}

// Token returns a random secret long enough for ADMIN_TOKEN, CRON_SECRET and
// IDEMPOTENCY_SECRET (service.MinSecretBytes).
func Token() string {
	b := make([]byte, service.MinSecretBytes/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
