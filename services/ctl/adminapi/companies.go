package adminapi

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Company is a partner company.
type Company struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// CreatedCompany is the answer to CreateCompany: the company and its four API keys by type
// (sk_test, sk_live, pk_test, pk_live), which the gateway shows only this once.
type CreatedCompany struct {
	Company Company           `json:"company"`
	Keys    map[string]string `json:"keys"`
}

// APIKey is a freshly rolled key; Key is shown only this once.
type APIKey struct {
	ID          string    `json:"id"`
	CompanyID   string    `json:"company_id"`
	Type        string    `json:"type"`
	Kind        string    `json:"kind"`
	Environment string    `json:"environment"`
	Prefix      string    `json:"prefix"`
	CreatedAt   time.Time `json:"created_at"`
	Key         string    `json:"key"`
}

// CreateCompany creates a company. idempotencyKey makes retries safe: a repeat returns the
// first answer instead of creating a second company.
func (c *Client) CreateCompany(ctx context.Context, name, idempotencyKey string) (CreatedCompany, error) {
	var out CreatedCompany
	err := c.do(ctx, http.MethodPost, "/api/v1/admin/companies", idempotencyKey,
		map[string]string{"name": name}, &out)
	return out, err
}

// ListCompanies lists every company, newest first.
func (c *Client) ListCompanies(ctx context.Context) ([]Company, error) {
	var out struct {
		Companies []Company `json:"companies"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/admin/companies", "", nil, &out)
	return out.Companies, err
}

// RollKey revokes the company's active key of keyType (sk_test, sk_live, pk_test, pk_live)
// and returns the new one.
func (c *Client) RollKey(ctx context.Context, companyID, keyType, idempotencyKey string) (APIKey, error) {
	var out struct {
		APIKey APIKey `json:"api_key"`
	}
	path := "/api/v1/admin/companies/" + url.PathEscape(companyID) + "/keys/" + url.PathEscape(keyType) + "/roll"
	err := c.do(ctx, http.MethodPost, path, idempotencyKey, nil, &out)
	return out.APIKey, err
}
