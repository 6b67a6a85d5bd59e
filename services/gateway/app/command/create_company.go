// Package command holds the gateway's use cases that change state, one per file.
package command

import (
	"context"
	"fmt"
	"time"

	"github.com/payplat/platform/services/gateway/domain"
)

// CreateCompany creates a partner company with one key of every type.
type CreateCompany struct {
	Name string
}

// IssuedKey is a freshly generated key: its stored form and the key itself, which is shown to
// the caller once and never stored.
type IssuedKey struct {
	Key   domain.APIKey
	Plain string
}

// CreatedCompany is the result of CreateCompany: the company and its four keys in the order of
// domain.KeyTypes.
type CreatedCompany struct {
	Company domain.Company
	Keys    []IssuedKey
}

// CompanyAdder stores a new company together with its keys, atomically.
type CompanyAdder interface {
	AddCompany(ctx context.Context, c domain.Company, keys []domain.APIKey) error
}

// CreateCompanyHandler runs CreateCompany.
type CreateCompanyHandler struct {
	repo CompanyAdder
	now  func() time.Time
}

// NewCreateCompanyHandler returns a CreateCompanyHandler storing through repo.
func NewCreateCompanyHandler(repo CompanyAdder) CreateCompanyHandler {
	return CreateCompanyHandler{repo: repo, now: time.Now}
}

// Handle validates the name, generates the keys and stores everything.
func (h CreateCompanyHandler) Handle(ctx context.Context, cmd CreateCompany) (CreatedCompany, error) {
	now := h.now()
	company, err := domain.NewCompany(cmd.Name, now)
	if err != nil {
		return CreatedCompany{}, err
	}
	out := CreatedCompany{Company: company}
	stored := make([]domain.APIKey, 0, len(domain.KeyTypes))
	for _, t := range domain.KeyTypes {
		key, plain, err := domain.NewAPIKey(company.ID(), t, now)
		if err != nil {
			return CreatedCompany{}, err
		}
		out.Keys = append(out.Keys, IssuedKey{Key: key, Plain: plain})
		stored = append(stored, key)
	}
	if err := h.repo.AddCompany(ctx, company, stored); err != nil {
		return CreatedCompany{}, fmt.Errorf("storing company: %w", err)
	}
	return out, nil
}
