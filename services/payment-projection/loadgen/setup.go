package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
)

// Gateway is where CreateTenants creates companies and merchants: the gateway's base URL and
// the platform administrator's token (ADMIN_TOKEN).
type Gateway struct {
	URL        string
	AdminToken string
	// Client is the HTTP client; nil uses one with enough idle connections for the workers.
	Client *http.Client
}

// CreateTenants creates companies through the admin API (POST /api/v1/admin/companies) and
// merchantsPerCompany merchants for each through the management API with the company's test
// secret key (POST /api/v1/management/merchants/create), from `workers` goroutines, and returns
// them as tenants in the test environment: real companies and merchants, so that the pool
// records a DEBIT and the merchant ledger a PAYMENT credit for every payment.confirmed.
func (g Gateway) CreateTenants(ctx context.Context, companies, merchantsPerCompany, workers int) ([]Tenant, error) {
	if g.Client == nil {
		g.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(workers, 2)}}
	}
	run := uuid.NewString()[:8]
	tenants := make([]Tenant, companies)
	keys := make([]string, companies)
	err := parallel(ctx, companies, workers, func(i int) error {
		var out struct {
			Company struct {
				ID string `json:"id"`
			} `json:"company"`
			Keys map[string]string `json:"keys"`
		}
		body := map[string]any{"name": fmt.Sprintf("loadgen %s %d", run, i)}
		if err := g.post(ctx, "/api/v1/admin/companies", "Bearer "+g.AdminToken, body, &out); err != nil {
			return fmt.Errorf("creating company %d: %w", i, err)
		}
		if out.Company.ID == "" || out.Keys["sk_test"] == "" {
			return fmt.Errorf("creating company %d: no id or sk_test key in the answer", i)
		}
		tenants[i] = Tenant{CompanyID: out.Company.ID, Environment: events.EnvTest,
			Merchants: make([]Merchant, merchantsPerCompany)}
		keys[i] = out.Keys["sk_test"]
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = parallel(ctx, companies*merchantsPerCompany, workers, func(k int) error {
		i, j := k/merchantsPerCompany, k%merchantsPerCompany
		var out struct {
			Merchant struct {
				ID     string `json:"id"`
				Wallet string `json:"wallet_address"`
			} `json:"merchant"`
		}
		body := map[string]any{"name": fmt.Sprintf("Shop %d", j), "email": fmt.Sprintf("shop%d-%s@example.com", j, run)}
		if err := g.post(ctx, "/api/v1/management/merchants/create", keys[i], body, &out); err != nil {
			return fmt.Errorf("creating merchant %d of company %s: %w", j, tenants[i].CompanyID, err)
		}
		tenants[i].Merchants[j] = Merchant{ID: out.Merchant.ID, Wallet: out.Merchant.Wallet}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tenants, nil
}

// post sends body as JSON with the API key (or "Bearer ..." authorization) and decodes the
// 201 answer into out.
func (g Gateway) post(ctx context.Context, path, auth string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(g.URL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if strings.HasPrefix(auth, "Bearer ") {
		req.Header.Set("Authorization", auth)
	} else {
		req.Header.Set("x-api-key", auth)
	}
	resp, err := g.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// parallel calls fn(0) … fn(n-1) from `workers` goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
