package ports_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/service"
	poolservice "github.com/payplat/platform/services/pool/service"
)

// BenchmarkPoolReads measures GET /pool/balance and GET /pool/transactions?limit=50 through the
// real gateway over a pool of 1,000,000 movements (inserted directly into the pool schema's
// read tables), with 8 concurrent clients; it reports requests per second and the p99 latency.
// The first page is the case that matters (newest first); offset pages cost what they skip.
func BenchmarkPoolReads(b *testing.B) {
	po := poolservice.Options(poolservice.Config{})
	dsn := testkit.NewDatabase(b, migrations.Set(), migrate.Set{Schema: po.Schema, Sources: po.Migrations})
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
	db := testkit.NewPool(b, dsn, "pool")
	for _, sql := range []string{
		`INSERT INTO movements (id, company_id, environment, seq, type, amount, balance_before, balance_after,
            status, tx_hash, description, payment_id, payment_amount, merchant_id, merchant_name, created_at, confirmed_at,
            key)
         SELECT gen_random_uuid(), $1, 'test', n, 'DEBIT', -1000000, 2000000000000 - (n - 1) * 1000000,
            2000000000000 - n * 1000000, 'CONFIRMED', '0xhash' || n, 'Payment p-' || n || ' to Corner Cafe',
            'p-' || n, 1000000, 'm-1', 'Corner Cafe', now(), now(), 'debit:p-' || n
         FROM generate_series(1::bigint, 1000000::bigint) AS n`,
		`INSERT INTO balances (company_id, environment, balance, low_threshold, version, movement_count, debit_count)
         VALUES ($1, 'test', 1000000000000, 100000000, 1000000, 1000000, 1000000)`,
		`ANALYZE movements`,
	} {
		args := []any{company}
		if !strings.Contains(sql, "$1") {
			args = nil
		}
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			b.Fatal(err)
		}
	}
	for _, path := range []string{"/api/v1/management/pool/balance", "/api/v1/management/pool/transactions?limit=50",
		"/api/v1/management/pool/transactions?limit=50&type=DEBIT"} {
		b.Run(strings.TrimPrefix(path, "/api/v1/management/pool/"), func(b *testing.B) {
			benchGet(b, gw.URL()+path, key)
		})
	}
}

func benchGet(b *testing.B, url, key string) {
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	b.SetParallelism(4) // 4 × GOMAXPROCS clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("x-api-key", key)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mine = append(mine, time.Since(start))
			if resp.StatusCode != http.StatusOK {
				b.Errorf("%d %s", resp.StatusCode, body)
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	slices.Sort(latencies)
	if len(latencies) > 0 {
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func benchCompany(b *testing.B, url, admin string) (id, key string) {
	req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/admin/companies", strings.NewReader(`{"name":"Hot Pool Ltd"}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	var resp *http.Response
	var err error
	for i := 0; i < 100; i++ { // the listener is bound before Run serves it
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Company struct{ ID string }
		Keys    map[string]string
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		b.Fatalf("creating company: %d %v", resp.StatusCode, err)
	}
	return out.Company.ID, out.Keys["sk_test"]
}
