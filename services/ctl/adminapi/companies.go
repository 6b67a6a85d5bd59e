package adminapi

import (
	"context"
	"errors"
	"time"

	"github.com/payplat/platform/api/client"
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

// errNoBody is a 2xx answer without the body the document promises.
var errNoBody = errors.New("decoding gateway answer: no JSON body")

func company(c client.Company) Company {
	return Company{ID: c.Id, Name: c.Name, CreatedAt: c.CreatedAt}
}

// CreateCompany creates a company. idempotencyKey makes retries safe: a repeat returns the
// first answer instead of creating a second company.
func (c *Client) CreateCompany(ctx context.Context, name, idempotencyKey string) (CreatedCompany, error) {
	var out CreatedCompany
	err := c.do(ctx, idempotencyKey, func() error {
		r, err := c.api.CreateCompanyWithResponse(ctx, &client.CreateCompanyParams{IdempotencyKey: optional(idempotencyKey)},
			client.CreateCompanyJSONRequestBody{Name: name})
		if err := failure(r, err); err != nil {
			return err
		}
		if r.JSON201 == nil {
			return errNoBody
		}
		k := r.JSON201.Keys
		out = CreatedCompany{Company: company(r.JSON201.Company), Keys: map[string]string{}}
		for typ, key := range map[string]string{"sk_test": k.SkTest, "sk_live": k.SkLive, "pk_test": k.PkTest,
			"pk_live": k.PkLive} {
			if key != "" {
				out.Keys[typ] = key
			}
		}
		return nil
	})
	return out, err
}

// ListCompanies lists every company, newest first.
func (c *Client) ListCompanies(ctx context.Context) ([]Company, error) {
	var out []Company
	err := c.do(ctx, "", func() error {
		r, err := c.api.ListCompaniesWithResponse(ctx)
		if err := failure(r, err); err != nil {
			return err
		}
		if r.JSON200 == nil {
			return errNoBody
		}
		for _, co := range r.JSON200.Companies {
			out = append(out, company(co))
		}
		return nil
	})
	return out, err
}

// RollKey revokes the company's active key of keyType (sk_test, sk_live, pk_test, pk_live)
// and returns the new one.
func (c *Client) RollKey(ctx context.Context, companyID, keyType, idempotencyKey string) (APIKey, error) {
	var out APIKey
	err := c.do(ctx, idempotencyKey, func() error {
		r, err := c.api.RollAPIKeyWithResponse(ctx, companyID, client.RollAPIKeyParamsKindEnv(keyType),
			&client.RollAPIKeyParams{IdempotencyKey: optional(idempotencyKey)})
		if err := failure(r, err); err != nil {
			return err
		}
		if r.JSON200 == nil {
			return errNoBody
		}
		k := r.JSON200.ApiKey
		out = APIKey{ID: k.Id, CompanyID: k.CompanyId, Type: string(k.Type), Kind: string(k.Kind),
			Environment: string(k.Environment), Prefix: k.Prefix, CreatedAt: k.CreatedAt, Key: k.Key}
		return nil
	})
	return out, err
}
