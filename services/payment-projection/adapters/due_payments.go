package adapters

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// DuePayments is app.DuePayments on the payments read table.
type DuePayments struct{ db *pgxpool.Pool }

// NewDuePayments returns the due payments of the payments table in db.
func NewDuePayments(db *pgxpool.Pool) *DuePayments { return &DuePayments{db: db} }

// ExpireDue claims due payments with FOR UPDATE SKIP LOCKED (oldest deadline first,
// payments_expiry_idx), calls expire with them, and marks them (expiry_published_at) in the
// same transaction.
func (r *DuePayments) ExpireDue(ctx context.Context, now time.Time, limit int,
	expire func(context.Context, []domain.Due) error) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT company_id, environment, payment_id, merchant_id, amount_micros, expires_at
            FROM payments
            WHERE status = 'CREATED' AND has_created AND expiry_published_at IS NULL AND expires_at <= $1
            ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return err
		}
		var d domain.Due
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Due, error) {
			err := r.Scan(&d.Key.CompanyID, &d.Key.Environment, &d.Key.PaymentID, &d.MerchantID, &d.AmountMicros, &d.ExpiresAt)
			return d, err
		})
		if err != nil || len(list) == 0 {
			return err
		}
		if err := expire(ctx, list); err != nil {
			return err
		}
		c, e, id := make([]string, len(list)), make([]string, len(list)), make([]string, len(list))
		for i, d := range list {
			c[i], e[i], id[i] = d.Key.CompanyID, d.Key.Environment, d.Key.PaymentID
		}
		_, err = tx.Exec(ctx, `UPDATE payments p SET expiry_published_at = p.expires_at
            FROM unnest($1::text[], $2::text[], $3::text[]) AS t(c, e, id)
            WHERE p.tenant_id = `+tenantOfTC+` AND p.company_id = t.c AND p.environment = t.e AND p.payment_id = t.id`,
			c, e, id)
		n = len(list)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
