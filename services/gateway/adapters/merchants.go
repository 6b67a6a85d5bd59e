package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/merchant/api"
)

// Merchants serves the merchant use cases: reads go straight to the merchant service's read
// tables (schema merchant, read-only; they are updated in the transaction of each command, so
// a 2xx command is visible to the next read), writes go through the merchant service's command
// API over NATS.
type Merchants struct {
	db     *pgxpool.Pool
	client *api.Client
}

// NewMerchants returns the adapter; with a nil nc every command answers
// domain.ErrMerchantServiceUnavailable.
func NewMerchants(db *pgxpool.Pool, nc *nats.Conn) *Merchants {
	return &Merchants{db: db, client: api.NewClient(nc)}
}

// List returns the company's merchants in env, newest first.
func (m *Merchants) List(ctx context.Context, companyID uuid.UUID, env domain.Environment) ([]domain.MerchantSummary, error) {
	rows, err := m.db.Query(ctx, `SELECT id::text, name, email, wallet_address, balance_micros, created_at
        FROM merchant.merchants WHERE company_id = $1 AND environment = $2
        ORDER BY created_at DESC, id DESC`, companyID.String(), string(env))
	if err != nil {
		return nil, fmt.Errorf("listing merchants: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.MerchantSummary, error) {
		var (
			s       domain.MerchantSummary
			balance int64
		)
		err := row.Scan(&s.ID, &s.Name, &s.Email, &s.WalletAddress, &balance, &s.CreatedAt)
		s.Balance = money.FromMicros(balance).String()
		return s, err
	})
}

// Ledger returns up to limit entries of the merchant's ledger, newest first, with the total
// count; domain.ErrNotFound unless the merchant is the company's in env.
func (m *Merchants) Ledger(ctx context.Context, companyID uuid.UUID, env domain.Environment, merchantID string,
	limit int) (domain.MerchantLedger, error) {
	return m.LedgerPage(ctx, domain.Principal{CompanyID: companyID, Environment: env}, merchantID, limit, 0)
}

func scanLedgerEntry(row pgx.CollectableRow) (domain.MerchantLedgerEntry, error) {
	var (
		e                     domain.MerchantLedgerEntry
		amount, before, after int64
	)
	err := row.Scan(&e.ID, &e.Type, &amount, &before, &after, &e.PaymentID, &e.Status, &e.Description, &e.CreatedAt)
	e.Amount, e.BalanceBefore = money.FromMicros(amount).String(), money.FromMicros(before).String()
	e.BalanceAfter = money.FromMicros(after).String()
	return e, err
}

// Create asks the merchant service to create a merchant with a new wallet.
func (m *Merchants) Create(ctx context.Context, p domain.Principal, requestID, merchantID, name,
	email string) (domain.MerchantCreated, error) {
	r, err := m.client.Create(ctx, requestID, api.CreateRequest{MerchantID: merchantID,
		CompanyID: p.CompanyID.String(), Environment: string(p.Environment), Name: name, Email: email})
	if err != nil {
		return domain.MerchantCreated{}, merchantError(err)
	}
	return domain.MerchantCreated{MerchantSummary: domain.MerchantSummary{ID: r.ID, Name: r.Name, Email: r.Email,
		WalletAddress: r.WalletAddress, Balance: r.Balance, CreatedAt: r.CreatedAt},
		WalletUserID: r.WalletUserID, Environment: r.Environment}, nil
}

// SetStatus asks the merchant service to change a merchant's status: for the company of p, or
// for the platform when p is nil.
func (m *Merchants) SetStatus(ctx context.Context, p *domain.Principal, requestID, merchantID, status,
	reason string) (domain.MerchantStatusResult, error) {
	var (
		r   api.Merchant
		err error
	)
	req := api.SetStatusRequest{MerchantID: merchantID, Status: status, Reason: reason}
	if p == nil {
		r, err = m.client.AdminSetStatus(ctx, requestID, req)
	} else {
		req.CompanyID, req.Environment = p.CompanyID.String(), string(p.Environment)
		r, err = m.client.SetStatus(ctx, requestID, req)
	}
	if err != nil {
		return domain.MerchantStatusResult{}, merchantError(err)
	}
	return domain.MerchantStatusResult{ID: r.ID, Name: r.Name, Status: r.Status, UpdatedAt: r.UpdatedAt}, nil
}

// merchantError maps a command API error to the gateway's errors.
func merchantError(err error) error {
	var e *api.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("merchant service: %w", err)
	}
	switch e.Code {
	case api.CodeValidation:
		return &validation.Error{Field: e.Field, Message: e.Message}
	case api.CodeDuplicate:
		return domain.ErrDuplicateResource
	case api.CodeNotFound:
		return domain.ErrNotFound
	case api.CodeStatusLocked:
		return domain.ErrMerchantStatusLocked
	case api.CodeWalletUnavailable:
		return domain.ErrWalletProviderUnavailable
	case api.CodeServiceUnavailable:
		return fmt.Errorf("%w: %s", domain.ErrMerchantServiceUnavailable, e.Message)
	default:
		return fmt.Errorf("merchant service: %w", err)
	}
}
