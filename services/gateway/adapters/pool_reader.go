package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	poolapi "github.com/payplat/platform/services/pool/api"
)

// PoolReader reads the pool service's read tables (schema pool: balances, movements),
// read-only. A company's pool exists from its creation: a pool without a row, or a database
// where the pool service has not created its schema yet, has balance 0.00 and the default
// settings.
type PoolReader struct {
	db *pgxpool.Pool
}

// NewPoolReader returns a reader on db.
func NewPoolReader(db *pgxpool.Pool) *PoolReader { return &PoolReader{db: db} }

// Balance returns the pool balance of a company in an environment.
func (r *PoolReader) Balance(ctx context.Context, company uuid.UUID, env domain.Environment) (domain.PoolBalance, error) {
	var balance, threshold int64
	var auto bool
	err := r.db.QueryRow(ctx, `SELECT balance, low_threshold, auto_top_up_enabled FROM pool.balances
        WHERE company_id = $1 AND environment = $2`, company.String(), string(env)).Scan(&balance, &threshold, &auto)
	if errors.Is(err, pgx.ErrNoRows) || isUndefinedTable(err) {
		return poolapi.NewBalance(money.Amount{}, domain.PoolDefaultLowThreshold, false), nil
	}
	if err != nil {
		return domain.PoolBalance{}, fmt.Errorf("reading pool balance: %w", err)
	}
	return poolapi.NewBalance(money.FromMicros(balance), money.FromMicros(threshold), auto), nil
}

// countColumns are the balances columns holding the number of movements per type filter.
var countColumns = map[string]string{"": "movement_count", "DEPOSIT": "deposit_count", "DEBIT": "debit_count",
	"CREDIT": "credit_count", "WITHDRAWAL": "withdrawal_count"}

// movementQueries are the page queries per type filter, one static query each so that every
// one has an index: the unfiltered list walks the unique (pool_id, seq, …) index backwards, and
// a type's list the partial index (pool_id, seq DESC) WHERE type = '<TYPE>', which the planner
// uses only when the query names the type as a literal. pool_id, which leads those indexes, is
// the pool service's key of a pool (the generated column of pool.movements, migration 02003),
// computed here with the column's expression from the company id ($1) and environment ($2);
// two pools may share one, so the queries filter on company_id and environment as well.
var movementQueries = func() map[string]string {
	out := make(map[string]string, len(countColumns))
	for typ := range countColumns {
		filter := ""
		if typ != "" {
			filter = ` AND type = '` + typ + `'`
		}
		out[typ] = `SELECT id, type, amount, balance_before, balance_after, status, tx_hash,
            description, payment_id, payment_amount, merchant_name, created_at, confirmed_at
        FROM pool.movements
        WHERE pool_id = hashtextextended($1::text || '/' || $2::text, 0) AND company_id = $1 AND environment = $2` +
			filter + `
        ORDER BY seq DESC LIMIT $3 OFFSET $4`
	}
	return out
}()

// Transactions returns a page of the pool's movements, newest first, with the number of
// movements matching the filter. The total is a counter kept on the pool's balances row in the
// append transaction (one row read, whatever the size of the pool); page and total are read
// in one repeatable-read snapshot so that they agree.
func (r *PoolReader) Transactions(ctx context.Context, company uuid.UUID, env domain.Environment,
	f domain.PoolTransactionFilter) (domain.PoolTransactionPage, error) {
	col, ok := countColumns[f.Type]
	if !ok {
		return domain.PoolTransactionPage{}, validation.Invalid("type", "unknown transaction type")
	}
	page := domain.PoolTransactionPage{Transactions: []domain.PoolTransaction{}}
	err := pgx.BeginTxFunc(ctx, r.db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `SELECT `+col+` FROM pool.balances WHERE company_id = $1 AND environment = $2`,
				company.String(), string(env)).Scan(&page.Total)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			page.Transactions, err = readMovements(ctx, tx, company.String(), string(env), f)
			return err
		})
	if isUndefinedTable(err) {
		return page, nil
	}
	if err != nil {
		return domain.PoolTransactionPage{}, fmt.Errorf("reading pool transactions: %w", err)
	}
	return page, nil
}

func readMovements(ctx context.Context, tx pgx.Tx, company, env string, f domain.PoolTransactionFilter) ([]domain.PoolTransaction, error) {
	rows, err := tx.Query(ctx, movementQueries[f.Type], company, env, f.Limit, f.Offset)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanPoolTransaction)
}

func scanPoolTransaction(row pgx.CollectableRow) (domain.PoolTransaction, error) {
	var (
		t                       domain.PoolTransaction
		amount, before, after   int64
		paymentID, merchantName *string
		paymentAmount           *int64
		confirmedAt             *time.Time
	)
	if err := row.Scan(&t.ID, &t.Type, &amount, &before, &after, &t.Status, &t.TxHash, &t.Description,
		&paymentID, &paymentAmount, &merchantName, &t.CreatedAt, &confirmedAt); err != nil {
		return t, err
	}
	t.Amount, t.BalanceBefore, t.BalanceAfter = money.FromMicros(amount), money.FromMicros(before), money.FromMicros(after)
	t.CreatedAt = t.CreatedAt.UTC()
	if confirmedAt != nil {
		c := confirmedAt.UTC()
		t.ConfirmedAt = &c
	}
	if paymentID != nil && (t.Type == "DEBIT" || t.Type == "CREDIT") {
		p := &domain.PoolPayment{PaymentID: *paymentID}
		if paymentAmount != nil {
			p.Amount = money.FromMicros(*paymentAmount)
		}
		if merchantName != nil {
			p.MerchantName = *merchantName
		}
		t.Payment = p
	}
	return t, nil
}

// isUndefinedTable reports a missing pool table: the pool service has not migrated this
// database yet, so no pool has any event.
func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000")
}
