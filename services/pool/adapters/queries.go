package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"

	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/app"
	"github.com/payplat/platform/services/pool/domain"
)

// TransactionView is a pool transaction as the commands answer it, with its place in the
// pool's chain.
type TransactionView struct {
	api.Transaction
	// Seq numbers the movements of the pool from 1 in chain order (not part of the API).
	Seq int64 `json:"-"`
}

// Balance reads the balance of a pool; a pool without events has balance 0.00 and the default
// settings.
func Balance(ctx context.Context, q eventstore.Querier, id domain.ID) (api.Balance, error) {
	var balance, threshold int64
	var auto bool
	err := q.QueryRow(ctx, `SELECT balance, low_threshold, auto_top_up_enabled FROM balances
        WHERE company_id = $1 AND environment = $2`, id.CompanyID, id.Environment).Scan(&balance, &threshold, &auto)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.NewBalance(money.Amount{}, domain.DefaultSettings()), nil
	}
	if err != nil {
		return api.Balance{}, fmt.Errorf("reading balance of %s: %w", id.StreamID(), err)
	}
	return app.NewBalance(money.FromMicros(balance),
		domain.Settings{LowThreshold: money.FromMicros(threshold), AutoTopUpEnabled: auto}), nil
}

// poolIDOf is the SQL expression of the pool_id of the pool whose company id and environment
// are the SQL expressions company and env: the expression of the generated column
// movements.pool_id (migration 02003), which leads the indexes of movements. Queries filter on
// it and on company_id and environment (two pools may share a pool_id).
func poolIDOf(company, env string) string {
	return `hashtextextended(` + company + ` || '/' || ` + env + `, 0)`
}

// poolIDOf12 is the pool_id of the pool whose company id is $1 and environment $2.
var poolIDOf12 = poolIDOf("$1::text", "$2::text")

const transactionColumns = `id, seq, type, amount, balance_before, balance_after, status, tx_hash, description,
    payment_id, payment_amount, merchant_name, created_at, confirmed_at`

// Transactions reads every movement of a pool in chain order (oldest first).
func Transactions(ctx context.Context, q eventstore.Querier, id domain.ID) ([]TransactionView, error) {
	rows, err := q.Query(ctx, `SELECT `+transactionColumns+` FROM movements
        WHERE pool_id = `+poolIDOf12+` AND company_id = $1 AND environment = $2 ORDER BY seq`, id.CompanyID, id.Environment)
	if err != nil {
		return nil, fmt.Errorf("reading movements of %s: %w", id.StreamID(), err)
	}
	return pgx.CollectRows(rows, scanTransaction)
}

// Transaction reads one movement of a pool.
func Transaction(ctx context.Context, q eventstore.Querier, id domain.ID, movementID uuid.UUID) (TransactionView, error) {
	rows, err := q.Query(ctx, `SELECT `+transactionColumns+` FROM movements
        WHERE pool_id = `+poolIDOf12+` AND company_id = $1 AND environment = $2 AND id = $3`,
		id.CompanyID, id.Environment, movementID)
	if err != nil {
		return TransactionView{}, fmt.Errorf("reading movement %s: %w", movementID, err)
	}
	return pgx.CollectExactlyOneRow(rows, scanTransaction)
}

func scanTransaction(row pgx.CollectableRow) (TransactionView, error) {
	var (
		t                       TransactionView
		amount, before, after   int64
		paymentID, merchantName *string
		paymentAmount           *int64
		confirmedAt             *time.Time
	)
	err := row.Scan(&t.ID, &t.Seq, &t.Type, &amount, &before, &after, &t.Status, &t.TxHash, &t.Description,
		&paymentID, &paymentAmount, &merchantName, &t.CreatedAt, &confirmedAt)
	if err != nil {
		return t, err
	}
	t.Amount, t.BalanceBefore, t.BalanceAfter = money.FromMicros(amount), money.FromMicros(before), money.FromMicros(after)
	if paymentID != nil {
		p := &api.Payment{PaymentID: *paymentID}
		if paymentAmount != nil {
			p.Amount = money.FromMicros(*paymentAmount)
		}
		if merchantName != nil {
			p.MerchantName = *merchantName
		}
		t.Payment = p
	}
	if confirmedAt != nil {
		c := confirmedAt.UTC()
		t.ConfirmedAt = &c
	}
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}
