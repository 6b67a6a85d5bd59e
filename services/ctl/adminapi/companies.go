package adminapi

import (
	"context"
	"errors"

	"github.com/payplat/platform/api/client"
)

// CreatedCompany is the answer to CreateCompany: the company and its four API keys by type
// (sk_test, sk_live, pk_test, pk_live), which the gateway shows only this once.
type CreatedCompany struct {
	Company client.Company    `json:"company"`
	Keys    map[string]string `json:"keys"`
}

// errNoBody is a 2xx answer without the body the document promises.
var errNoBody = errors.New("decoding gateway answer: no JSON body")

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
		out = CreatedCompany{Company: r.JSON201.Company, Keys: map[string]string{}}
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
func (c *Client) ListCompanies(ctx context.Context) ([]client.Company, error) {
	var out []client.Company
	err := c.do(ctx, "", func() error {
		r, err := c.api.ListCompaniesWithResponse(ctx)
		if err := failure(r, err); err != nil {
			return err
		}
		if r.JSON200 == nil {
			return errNoBody
		}
		out = r.JSON200.Companies
		return nil
	})
	return out, err
}

// RollKey revokes the company's active key of keyType (sk_test, sk_live, pk_test, pk_live)
// and returns the new one, whose Key is shown only this once.
func (c *Client) RollKey(ctx context.Context, companyID, keyType, idempotencyKey string) (client.IssuedAPIKey, error) {
	var out client.IssuedAPIKey
	err := c.do(ctx, idempotencyKey, func() error {
		r, err := c.api.RollAPIKeyWithResponse(ctx, companyID, client.RollAPIKeyParamsKindEnv(keyType),
			&client.RollAPIKeyParams{IdempotencyKey: optional(idempotencyKey)})
		if err := failure(r, err); err != nil {
			return err
		}
		if r.JSON200 == nil {
			return errNoBody
		}
		out = r.JSON200.ApiKey
		return nil
	})
	return out, err
}
