// Package command holds the merchant service's commands, one per file.
package command

import (
	"context"
	"errors"
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
	repo    app.Repository
	wallets app.WalletProvider
	now     func() time.Time
}

// NewCreateMerchantHandler returns a handler that stores merchants in repo, each with a wallet
// from wallets.
func NewCreateMerchantHandler(repo app.Repository, wallets app.WalletProvider) CreateMerchantHandler {
	return CreateMerchantHandler{repo: repo, wallets: wallets, now: time.Now}
}

// Handle validates the input and creates the merchant with a freshly provisioned wallet. A
// duplicate email provisions no wallet; a provider failure stores nothing and returns
// domain.ErrWalletUnavailable.
func (h CreateMerchantHandler) Handle(ctx context.Context, cmd CreateMerchant) (*domain.Merchant, error) {
	name, email, err := domain.ValidateNew(cmd.Name, cmd.Email)
	if err != nil {
		return nil, err
	}
	scope := app.Scope{CompanyID: cmd.CompanyID, Environment: cmd.Environment}
	id, repeatable := cmd.MerchantID, cmd.MerchantID != uuid.Nil
	if !repeatable {
		id = uuid.New()
	}
	m, err := h.repo.Create(ctx, app.NewMerchant{ID: id, CompanyID: cmd.CompanyID, Environment: cmd.Environment,
		Name: name, Email: email, At: h.now().Truncate(time.Microsecond)}, h.wallets)
	if repeatable && (errors.Is(err, domain.ErrDuplicateEmail) || errors.Is(err, app.ErrMerchantExists)) {
		// A repeated creation finds its email reserved (or, with another email, its id
		// taken): the same request gets the merchant created the first time.
		existing, getErr := h.repo.Get(ctx, id, app.Scope{All: true})
		if getErr == nil {
			return sameCreation(existing, scope, email)
		}
		if !errors.Is(getErr, domain.ErrNotFound) {
			return nil, getErr
		}
	}
	if err != nil {
		return nil, err
	}
	return m, nil
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
