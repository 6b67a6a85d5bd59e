// Package query holds the gateway's read-only use cases, one per file.
package query

import (
	"context"
	"fmt"

	"github.com/payplat/platform/services/gateway/domain"
)

// CompanyLister reads every company, newest first.
type CompanyLister interface {
	ListCompanies(ctx context.Context) ([]domain.Company, error)
}

// ListCompaniesHandler lists the partner companies (never their keys).
type ListCompaniesHandler struct {
	repo CompanyLister
}

// NewListCompaniesHandler returns a ListCompaniesHandler reading through repo.
func NewListCompaniesHandler(repo CompanyLister) ListCompaniesHandler {
	return ListCompaniesHandler{repo: repo}
}

// Handle returns the companies, newest first.
func (h ListCompaniesHandler) Handle(ctx context.Context) ([]domain.Company, error) {
	companies, err := h.repo.ListCompanies(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing companies: %w", err)
	}
	return companies, nil
}
