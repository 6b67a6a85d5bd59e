// Package command holds the merchant service's commands, one per file.
package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain"
)

// CreateMerchant creates a merchant with a freshly provisioned wallet. MerchantID is optional:
// a caller that retries a creation (the gateway, under one Idempotency-Key) sends the same id
// and gets the merchant created the first time instead of a duplicate.
type CreateMerchant struct {
	MerchantID  uuid.UUID
	CompanyID   string
	Environment string
	Name        string
	Email       string
}

// CreateMerchantHandler handles CreateMerchant.
type CreateMerchantHandler struct {
	repo    app.MerchantRepository
	wallets app.WalletProvider
	now     func() time.Time
}

// NewCreateMerchantHandler returns the handler.
func NewCreateMerchantHandler(repo app.MerchantRepository, wallets app.WalletProvider) CreateMerchantHandler {
	return CreateMerchantHandler{repo: repo, wallets: wallets, now: time.Now}
}

// Handle validates the input, provisions a wallet and stores the merchant. A provider failure
// stores nothing and returns domain.ErrWalletUnavailable.
func (h CreateMerchantHandler) Handle(ctx context.Context, cmd CreateMerchant) (*domain.Merchant, error) {
	name, email, err := domain.ValidateNew(cmd.Name, cmd.Email)
	if err != nil {
		return nil, err
	}
	scope := app.Scope{CompanyID: cmd.CompanyID, Environment: cmd.Environment}
	id := cmd.MerchantID
	if id == uuid.Nil {
		id = uuid.New()
	} else if m, err := h.repo.Get(ctx, id, app.Scope{All: true}); err == nil {
		return sameCreation(m, scope, email)
	} else if !errors.Is(err, domain.ErrNotFound) {
		return nil, err
	}
	// Checked before provisioning so that a duplicate does not use up a wallet; the
	// reservation in Create settles races.
	taken, err := h.repo.EmailTaken(ctx, cmd.CompanyID, cmd.Environment, email)
	if err != nil {
		return nil, err
	}
	if taken {
		return nil, domain.ErrDuplicateEmail
	}
	w, err := h.wallets.Provision(ctx, app.WalletRequest{CompanyID: cmd.CompanyID, Environment: cmd.Environment, MerchantID: id})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", domain.ErrWalletUnavailable, err)
	}
	ev, err := domain.Create(domain.NewMerchantParams{ID: id, CompanyID: cmd.CompanyID, Environment: cmd.Environment,
		Name: name, Email: email, WalletAddress: w.Address, WalletUserID: w.UserID}, h.now().Truncate(time.Microsecond))
	if err != nil {
		return nil, err
	}
	m, err := h.repo.Create(ctx, ev)
	if errors.Is(err, app.ErrMerchantExists) {
		if m, err := h.repo.Get(ctx, id, app.Scope{All: true}); err == nil {
			return sameCreation(m, scope, email)
		}
	}
	return m, err
}

// sameCreation answers a creation whose id exists: the same merchant when it is the same
// request, a conflict otherwise.
func sameCreation(m *domain.Merchant, scope app.Scope, email string) (*domain.Merchant, error) {
	s := m.Snapshot()
	if scope.Admits(s.CompanyID, s.Environment) && domain.EmailKey(s.Email) == domain.EmailKey(email) {
		return m, nil
	}
	return nil, domain.ErrDuplicateEmail
}
