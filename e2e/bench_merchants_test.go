package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/money"
)

// benchClient keeps enough idle connections for the parallel benchmark goroutines.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}

// post sends a JSON POST with the API key and returns the status.
func post(url, key string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", key)
	resp, err := benchClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func get(url, key string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	resp, err := benchClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// createMerchants creates n merchants through the gateway from `workers` goroutines.
func createMerchants(tb testing.TB, s *stack, key string, n, workers int) {
	tb.Helper()
	run := uuid.NewString()[:8]
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				body := fmt.Appendf(nil, `{"name":"Shop %d","email":"m%d-%s@example.com"}`, i, i, run)
				status, err := post(s.url+"/api/v1/management/merchants/create", key, body)
				if err != nil || status != http.StatusCreated {
					failed.Store(fmt.Sprintf("create %d: %d %v", i, status, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		tb.Fatal(f)
	}
}

// BenchmarkMerchantCreate: merchants created per second through the gateway (HTTP, API key
// check, Idempotency handling, NATS request to the merchant service, HD wallet derivation,
// event append and read tables in one transaction), 64 clients at once.
func BenchmarkMerchantCreate(b *testing.B) {
	s := newStack(b, append([]string{"LOG_LEVEL=error"}, noRateLimits...)...)
	// Warm-up, not timed: every client's connection to the gateway, the services' connections
	// to PostgreSQL and their prepared statements, as in a running system. Without it a
	// 2,000-create run spends a fifth of its time starting up (756-938 creates/s quiet, against
	// 1,109-1,158 over 10,000 creates).
	createMerchants(b, s, s.creds.Keys.SKTest, 512, 64)
	b.ResetTimer()
	createMerchants(b, s, s.creds.Keys.SKTest, b.N, 64)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// latencies measures fn from `workers` goroutines for b.N calls and reports req/s and p99.
func latencies(b *testing.B, workers int, fn func() error) {
	var (
		mu   sync.Mutex
		all  = make([]time.Duration, 0, b.N)
		next atomic.Int64
		wg   sync.WaitGroup
		fail atomic.Value
	)
	b.ResetTimer()
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			local := make([]time.Duration, 0, b.N/workers+1)
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				if err := fn(); err != nil {
					fail.Store(err)
					return
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	if f := fail.Load(); f != nil {
		b.Fatal(f)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
}

const listMerchants = 1000

// BenchmarkListMerchants: GET /api/v1/management/merchants for a company with 1,000 merchants,
// through the whole gateway (auth, query, JSON), 8 clients at once.
func BenchmarkListMerchants(b *testing.B) {
	s := newStack(b, append([]string{"LOG_LEVEL=error"}, noRateLimits...)...)
	key := s.creds.Keys.SKTest
	createMerchants(b, s, key, listMerchants, 32)
	url := s.url + "/api/v1/management/merchants"
	latencies(b, 8, func() error {
		if status, err := get(url, key); err != nil || status != http.StatusOK {
			return fmt.Errorf("list: %d %v", status, err)
		}
		return nil
	})
}

// BenchmarkListMerchantsBareCeiling: the same query and the same JSON served by a bare
// net/http handler on pgx, with no auth, middleware or error handling: the ceiling the gateway
// is compared with.
func BenchmarkListMerchantsBareCeiling(b *testing.B) {
	s := newStack(b, append([]string{"LOG_LEVEL=error"}, noRateLimits...)...)
	key := s.creds.Keys.SKTest
	createMerchants(b, s, key, listMerchants, 32)
	db, err := pgxpool.New(context.Background(), s.creds.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	company, env := s.creds.Company.ID, "test"
	type merchant struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		Email         string `json:"email"`
		WalletAddress string `json:"wallet_address"`
		Balance       string `json:"balance"`
		CreatedAt     string `json:"created_at"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rows, err := db.Query(r.Context(), `SELECT id::text, name, email, wallet_address, balance_micros, created_at
            FROM merchant.merchants WHERE company_id = $1 AND environment = $2
            ORDER BY created_at DESC, id DESC`, company, env)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (merchant, error) {
			var m merchant
			var micros int64
			var created time.Time
			err := row.Scan(&m.ID, &m.Name, &m.Email, &m.WalletAddress, &micros, &created)
			m.Balance, m.CreatedAt = money.FromMicros(micros).String(), created.UTC().Format(time.RFC3339Nano)
			return m, err
		})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"merchants": out})
	}))
	defer srv.Close()
	latencies(b, 8, func() error {
		if status, err := get(srv.URL, ""); err != nil || status != http.StatusOK {
			return fmt.Errorf("bare list: %d %v", status, err)
		}
		return nil
	})
}
