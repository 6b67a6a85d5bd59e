package ports_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
	poolservice "github.com/payplat/platform/services/pool/service"
)

// BenchmarkPoolReads measures GET /pool/balance and GET /pool/transactions?limit=50 through the
// real gateway over a pool of 1,000,000 movements (inserted directly into the pool schema's
// read tables), with 8 concurrent clients; it reports requests per second and the p99 latency.
// The first page is the case that matters (newest first); offset pages cost what they skip.
func BenchmarkPoolReads(b *testing.B) {
	po := poolservice.Options(poolservice.Config{})
	dsn := testkit.NewDatabase(b, migrations.Set(), migrate.Set{Schema: po.Schema, Sources: po.Migrations})
	url, company, key := gatewaytest.RunWithCompany(b, dsn, "Hot Pool Ltd")
	gatewaytest.Seed(b, testkit.NewPool(b, dsn, "pool"), company,
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
	)
	for _, path := range []string{"/api/v1/management/pool/balance", "/api/v1/management/pool/transactions?limit=50",
		"/api/v1/management/pool/transactions?limit=50&type=DEBIT"} {
		b.Run(strings.TrimPrefix(path, "/api/v1/management/pool/"), func(b *testing.B) {
			benchGet(b, url+path, key)
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
