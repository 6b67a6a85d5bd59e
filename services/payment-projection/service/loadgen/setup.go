package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/api/client"
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
// records a DEBIT and the merchant ledger a PAYMENT credit for every payment.confirmed. It
// calls the gateway with the typed client generated from api/openapi.yaml.
func (g Gateway) CreateTenants(ctx context.Context, companies, merchantsPerCompany, workers int) ([]Tenant, error) {
	if g.Client == nil {
		g.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(workers, 2)}}
	}
	admin, err := g.api(client.WithBearer(g.AdminToken))
	if err != nil {
		return nil, err
	}
	run := uuid.NewString()[:8]
	tenants := make([]Tenant, companies)
	keys := make([]string, companies)
	err = parallel(ctx, companies, workers, func(i int) error {
		var r *client.CreateCompanyResponse
		err := retryLimited(ctx, func() (client.Response, error) {
			var err error
			r, err = admin.CreateCompanyWithResponse(ctx, nil,
				client.CreateCompanyJSONRequestBody{Name: fmt.Sprintf("loadgen %s %d", run, i)})
			return r, err
		})
		if err != nil {
			return fmt.Errorf("creating company %d: %w", i, err)
		}
		if r.JSON201 == nil || r.JSON201.Company.Id == "" || r.JSON201.Keys.SkTest == "" {
			return fmt.Errorf("creating company %d: no id or sk_test key in the answer", i)
		}
		tenants[i] = Tenant{CompanyID: r.JSON201.Company.Id, Environment: events.EnvTest,
			Merchants: make([]Merchant, merchantsPerCompany)}
		keys[i] = r.JSON201.Keys.SkTest
		return nil
	})
	if err != nil {
		return nil, err
	}
	partners := make([]*client.ClientWithResponses, companies)
	for i, key := range keys {
		if partners[i], err = g.api(client.WithAPIKey(key)); err != nil {
			return nil, err
		}
	}
	err = parallel(ctx, companies*merchantsPerCompany, workers, func(k int) error {
		i, j := k/merchantsPerCompany, k%merchantsPerCompany
		var r *client.CreateMerchantResponse
		err := retryLimited(ctx, func() (client.Response, error) {
			var err error
			r, err = partners[i].CreateMerchantWithResponse(ctx, nil, client.CreateMerchantJSONRequestBody{
				Name: fmt.Sprintf("Shop %d", j), Email: fmt.Sprintf("shop%d-%s@example.com", j, run)})
			return r, err
		})
		if err != nil {
			return fmt.Errorf("creating merchant %d of company %s: %w", j, tenants[i].CompanyID, err)
		}
		if r.JSON201 == nil {
			return fmt.Errorf("creating merchant %d of company %s: no merchant in the answer", j, tenants[i].CompanyID)
		}
		tenants[i].Merchants[j] = Merchant{ID: r.JSON201.Merchant.Id, Wallet: r.JSON201.Merchant.WalletAddress}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tenants, nil
}

// api returns a typed client of the gateway (api/client, generated from api/openapi.yaml)
// authenticated with auth.
func (g Gateway) api(auth client.ClientOption) (*client.ClientWithResponses, error) {
	return client.NewClientWithResponses(strings.TrimSuffix(g.URL, "/"), client.WithHTTPClient(g.Client), auth)
}

// retryLimited runs call until it is not refused for the rate limit (429): the gateway's
// budget per API key is part of the contract, and setting up thousands of merchants for one
// company meets it. It waits Retry-After between tries; any other failure is returned.
func retryLimited(ctx context.Context, call func() (client.Response, error)) error {
	for {
		err := client.Failure(call())
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(max(apiErr.RetryAfter, 1)) * time.Second):
		}
	}
}

// parallel calls fn(0) … fn(n-1) from `workers` goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					cancel(err)
				}
			}
		})
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
