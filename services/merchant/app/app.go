// Package app holds the merchant service's use cases: one command or query per file in
// app/command and app/query, driven by the ports (NATS commands, the ledger consumer).
package app

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/merchant/domain"
)

// ErrMerchantExists reports a creation whose merchant id is already taken.
var ErrMerchantExists = errors.New("merchant id already exists")

// Scope is the tenant a caller may see: a company in one environment, or everything (the
// platform administrator).
type Scope struct {
	CompanyID   string
	Environment string
	// All admits every merchant (admin commands).
	All bool
}

// Admits reports whether a merchant of company and env is visible in the scope.
func (s Scope) Admits(company, env string) bool {
	return s.All || (s.CompanyID == company && s.Environment == env)
}

// MerchantRepository stores merchants. Implementations append the events and update the read
// tables atomically.
type MerchantRepository interface {
	// Create stores a new merchant: domain.ErrDuplicateEmail when the company already has the
	// email in the environment, ErrMerchantExists when the id is taken.
	Create(ctx context.Context, ev domain.Created) (*domain.Merchant, error)
	// EmailTaken reports whether the email is reserved for the company and environment.
	EmailTaken(ctx context.Context, companyID, env, email string) (bool, error)
	// Get returns the merchant, domain.ErrNotFound when it does not exist in scope.
	Get(ctx context.Context, id uuid.UUID, scope Scope) (*domain.Merchant, error)
	// Update runs decide on the current merchant and stores the events it returns, with no
	// concurrent change in between.
	Update(ctx context.Context, id uuid.UUID, scope Scope, decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error)
}

// WalletRequest says for whom a wallet is provisioned.
type WalletRequest struct {
	CompanyID   string
	Environment string
	MerchantID  uuid.UUID
}

// Wallet is a provisioned wallet: its address and the provider's user record behind it.
type Wallet struct {
	Address string
	UserID  string
}

// WalletProvider provisions a dedicated wallet per merchant.
type WalletProvider interface {
	Provision(ctx context.Context, req WalletRequest) (Wallet, error)
}
