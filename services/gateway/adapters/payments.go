package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// DefaultPublishTimeout bounds each JetStream publish of a payment request
// (GATEWAY_PUBLISH_TIMEOUT).
const DefaultPublishTimeout = 2 * time.Second

// Payments is the gateway's access to payments. Reads go straight to the payment-projection's
// read table (schema payments) and the merchant read table (schema merchant), read-only. Writes
// are events published to the PAYMENTS stream, in an admission transaction that holds the
// merchant's row (payments_publish.go, command.PaymentWriter); a request then waits until the
// projection shows them: it subscribes to the projection's core NATS announcement for the
// payment (projectionapi.AppliedSubject) before publishing and re-reads the table on each announcement, so the
// wait ends as soon as the row is there, without polling.
type Payments struct {
	db  *pgxpool.Pool
	nc  *nats.Conn
	pub *bus.Publisher
	// publishTimeout bounds each publish, and the wait for an admission slot.
	publishTimeout time.Duration
	// admissions bounds the admission transactions in flight, each holding a connection of db
	// across a publish: half the pool, so that a slow NATS never takes every connection from the
	// API key lookups and reads of everyone else (issue 16).
	admissions chan struct{}
}

// NewPayments returns the adapter; with a nil nc every write answers
// domain.ErrPaymentsUnavailable. publishTimeout bounds each publish (zero means
// DefaultPublishTimeout).
func NewPayments(db *pgxpool.Pool, nc *nats.Conn, publishTimeout time.Duration) *Payments {
	if publishTimeout <= 0 {
		publishTimeout = DefaultPublishTimeout
	}
	p := &Payments{db: db, nc: nc, publishTimeout: publishTimeout,
		admissions: make(chan struct{}, max(1, db.Config().MaxConns/2))}
	if nc != nil {
		p.pub, _ = bus.NewPublisher(nc, bus.PublisherOptions{})
	}
	return p
}

// tenantOf12 is the tenant_id of the company whose id is $1 in environment $2: the expression
// of the generated column payments.tenant_id (migration 3003 of the payment-projection), which
// leads the indexes of payments. Queries filter on it and on company_id and environment (two
// tenants may share a tenant_id).
const tenantOf12 = `hashtextextended($1::text || '/' || $2::text, 0)`

// paymentListQueries are the page queries per status filter, one static query each so that
// every one has an index: the unfiltered list walks (tenant_id, created_at DESC, payment_id
// DESC), and a status's list the partial index of the same columns WHERE public_status =
// '<STATUS>', which the planner uses only when the query names the status as a literal.
var paymentListQueries = func() map[string]string {
	out := map[string]string{}
	for _, status := range []string{"", domain.PaymentPending, domain.PaymentConfirmed, domain.PaymentFailed} {
		filter := ""
		if status != "" {
			filter = ` AND public_status = '` + status + `'`
		}
		out[status] = `SELECT ` + paymentColumns + ` FROM payments.payments
        WHERE tenant_id = ` + tenantOf12 + ` AND company_id = $1 AND environment = $2` + filter + `
        ORDER BY created_at DESC, payment_id DESC LIMIT $3 OFFSET $4`
	}
	return out
}()

// List returns a page of the company's payments in env, newest first, and whether more follow.
func (a *Payments) List(ctx context.Context, p domain.Principal, f domain.PaymentFilter) ([]domain.Payment, bool, error) {
	query, ok := paymentListQueries[f.Status]
	if !ok {
		return nil, false, validation.Invalid("status", "must be PENDING, CONFIRMED or FAILED")
	}
	rows, err := a.db.Query(ctx, query, p.CompanyID.String(), string(p.Environment), f.Limit+1, f.Offset)
	if err != nil {
		return nil, false, fmt.Errorf("listing payments: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanPayment)
	if err != nil {
		return nil, false, fmt.Errorf("listing payments: %w", err)
	}
	more := len(list) > f.Limit
	if more {
		list = list[:f.Limit]
	}
	if err := a.nameMerchants(ctx, p, list); err != nil {
		return nil, false, err
	}
	return list, more, nil
}

const paymentColumns = `payment_id, public_status, amount_micros, currency, merchant_id, tx_hash, created_at,
    expires_at, confirmed_at, has_created`

func scanPayment(row pgx.CollectableRow) (domain.Payment, error) {
	var (
		pm     domain.Payment
		amount int64
	)
	err := row.Scan(&pm.ID, &pm.Status, &amount, &pm.Currency, &pm.MerchantID, &pm.TxHash, &pm.CreatedAt,
		&pm.ExpiresAt, &pm.ConfirmedAt, &pm.Created)
	pm.Amount = money.FromMicros(amount).String()
	return pm, err
}

// nameMerchants fills the merchant names from the merchant read table (payment events carry
// only the merchant id; names never change, so reading them at request time is exact).
func (a *Payments) nameMerchants(ctx context.Context, p domain.Principal, list []domain.Payment) error {
	var ids []uuid.UUID
	for _, pm := range list {
		if id, err := uuid.Parse(pm.MerchantID); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := a.db.Query(ctx, `SELECT id::text, name FROM merchant.merchants
        WHERE id = ANY($1) AND company_id = $2 AND environment = $3`, ids, p.CompanyID.String(), string(p.Environment))
	if err != nil {
		return fmt.Errorf("reading merchant names: %w", err)
	}
	names := map[string]string{}
	var id, name string
	if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error { names[id] = name; return nil }); err != nil {
		return fmt.Errorf("reading merchant names: %w", err)
	}
	for i := range list {
		if u, err := uuid.Parse(list[i].MerchantID); err == nil {
			list[i].MerchantName = names[u.String()]
		}
	}
	return nil
}

// lockMerchant reads the company's merchant in env, with its status, under a share lock held
// until tx ends: domain.ErrNotFound for an unknown merchant or another tenant's. The merchant
// service changes a status by updating this row in the transaction that appends the change, so a
// status change committed before the lock is seen here and one committed after it waits for tx.
func lockMerchant(ctx context.Context, tx pgx.Tx, p domain.Principal, merchantID string) (domain.PaymentMerchant, error) {
	id, err := uuid.Parse(merchantID)
	if err != nil {
		return domain.PaymentMerchant{}, domain.ErrNotFound
	}
	m := domain.PaymentMerchant{ID: id.String()}
	// The merchant service's function takes the share lock: the gateway may only read its tables.
	// The balances of the merchant and of the company's pool come with it, for the admission's
	// check of the balance limits (a pool without a row is at 0.00).
	err = tx.QueryRow(ctx, `SELECT l.name, l.wallet_address, l.status, m.balance_micros,
            COALESCE((SELECT b.balance FROM pool.balances b WHERE b.company_id = $2 AND b.environment = $3), 0)
        FROM merchant.lock_merchant_for_payment($1, $2, $3) l, merchant.merchants m WHERE m.id = $1`,
		pgtype.UUID{Bytes: id, Valid: true}, p.CompanyID.String(), string(p.Environment)).
		Scan(&m.Name, &m.WalletAddress, &m.Status, &m.Balance, &m.PoolBalance)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return m, domain.ErrNotFound
	case err != nil:
		return m, fmt.Errorf("reading merchant: %w", err)
	}
	return m, nil
}

// Find reads one payment of the principal, or nil, without its merchant's name.
func (a *Payments) Find(ctx context.Context, p domain.Principal, paymentID string) (*domain.Payment, error) {
	rows, err := a.db.Query(ctx, `SELECT `+paymentColumns+` FROM payments.payments
        WHERE tenant_id = `+tenantOf12+` AND company_id = $1 AND environment = $2 AND payment_id = $3`,
		p.CompanyID.String(), string(p.Environment), paymentID)
	if err != nil {
		return nil, fmt.Errorf("reading payment: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanPayment)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}
