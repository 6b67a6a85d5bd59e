// Package app holds the merchant service's use cases: one command or query per file in
// app/command and app/query, driven by the ports (NATS commands, the ledger consumer).
package app

import (
	"context"
	"errors"
	"time"

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

// Repository stores merchants. Implementations append the events and update the read
// tables atomically.
type Repository interface {
	// Create stores a new merchant with a wallet from wallets, in one transaction: it reserves
	// the email for the company and environment first (domain.ErrDuplicateEmail when it is
	// taken, before any wallet is provisioned), then provisions the wallet (a provider failure,
	// wrapped in domain.ErrWalletUnavailable, stores nothing) and appends merchant.created.
	// ErrMerchantExists when the id is taken.
	Create(ctx context.Context, nm NewMerchant, wallets WalletProvider) (*domain.Merchant, error)
	// Get returns the merchant, domain.ErrNotFound when it does not exist in scope.
	Get(ctx context.Context, id uuid.UUID, scope Scope) (*domain.Merchant, error)
	// Update runs decide on the current merchant and stores the events it returns, with no
	// concurrent change in between.
	Update(ctx context.Context, id uuid.UUID, scope Scope, decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error)
}

// NewMerchant is a validated merchant to create; its wallet is provisioned during the creation.
type NewMerchant struct {
	ID          uuid.UUID
	CompanyID   string
	Environment string
	Name        string
	Email       string
	At          time.Time
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

// WalletProvider provisions a dedicated wallet per merchant. The repository calls it inside
// the creation of the merchant, once the email is reserved: a provider that keeps its records
// in the merchant database (the HD provider) writes them in the creation's transaction, so a
// creation that fails leaves no record behind.
type WalletProvider interface {
	Provision(ctx context.Context, req WalletRequest) (Wallet, error)
}
