// Package adapters holds the payment-projection's PostgreSQL and NATS adapters: the payments
// table (its facts, their fold, the bulk loader of a rebuild), the expirer and the
// applied-payment notifications.
package adapters

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// SavePayments records facts in their payments' rows within tx and returns the payments as
// folded now, with two set-based statements: lock (or create) the payments and read their
// stored facts, then write each payment's fold (domain.Fold) with all its facts. The rows are
// locked first, so that two replicas applying facts of the same payment at once serialise on
// it and neither loses the other's transition.
func SavePayments(ctx context.Context, tx pgx.Tx, facts []domain.Fact) ([]domain.Payment, error) {
	keys := distinctKeys(facts)
	all, err := lockPayments(ctx, tx, keys)
	if err != nil {
		return nil, err
	}
	for _, f := range facts {
		all[f.Key] = append(all[f.Key], f)
	}
	folded := make([]domain.Payment, len(keys))
	blobs := make([][]byte, len(keys))
	for i, k := range keys {
		if folded[i], blobs[i], err = foldAndEncode(all[k]); err != nil {
			return nil, err
		}
	}
	if err := updatePayments(ctx, tx, folded, blobs); err != nil {
		return nil, err
	}
	return folded, nil
}

// TruncatePayments empties the payments table within tx.
func TruncatePayments(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `TRUNCATE payments`)
	return err
}

func distinctKeys(facts []domain.Fact) []domain.Key {
	keys := make([]domain.Key, 0, len(facts))
	for _, f := range facts {
		keys = append(keys, f.Key)
	}
	slices.SortFunc(keys, domain.Key.Compare)
	return slices.Compact(keys)
}

func keyArrays(keys []domain.Key) (companies, envs, ids []string) {
	for _, k := range keys {
		companies, envs, ids = append(companies, k.CompanyID), append(envs, k.Environment), append(ids, k.PaymentID)
	}
	return companies, envs, ids
}

// tenantOfTC is the tenant_id of the payment key t(c, e, id) of an unnest: the expression of the
// generated column payments.tenant_id (migration 3003), which leads the primary key. The
// statements join on it and on company_id and environment (two tenants may share a tenant_id).
const tenantOfTC = `hashtextextended(t.c || '/' || t.e, 0)`

// lockPayments creates the missing rows and locks every row of keys, in key order (so that
// concurrent appliers cannot deadlock on each other), and returns the facts stored in them (none
// for the rows it created). It runs under READ COMMITTED: once the lock is held, the row read
// is the one the previous holder committed. The conflict target is the primary key (tenant_id,
// payment_id, company_id, environment), whose tenant_id PostgreSQL generates before it looks
// for the conflict.
func lockPayments(ctx context.Context, tx pgx.Tx, keys []domain.Key) (map[domain.Key][]domain.Fact, error) {
	c, e, id := keyArrays(keys)
	rows, err := tx.Query(ctx, `INSERT INTO payments (company_id, environment, payment_id)
        SELECT c, e, id FROM unnest($1::text[], $2::text[], $3::text[]) AS t(c, e, id) ORDER BY c, e, id
        ON CONFLICT (tenant_id, payment_id, company_id, environment) DO UPDATE SET updated_at = payments.updated_at
        RETURNING company_id, environment, payment_id, facts`, c, e, id)
	if err != nil {
		return nil, fmt.Errorf("locking payments: %w", err)
	}
	stored := make(map[domain.Key][]domain.Fact, len(keys))
	var (
		k    domain.Key
		blob []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&k.CompanyID, &k.Environment, &k.PaymentID, &blob}, func() error {
		fs, err := DecodeFacts(k, blob)
		stored[k] = fs
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("locking payments: %w", err)
	}
	return stored, nil
}

func updatePayments(ctx context.Context, tx pgx.Tx, ps []domain.Payment, facts [][]byte) error {
	n := len(ps)
	var (
		c, e, id, status, merchant, mWallet, cWallet, txHash, url, errMsg = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n)
		hasCreated                    = make([]bool, n)
		amount                        = make([]int64, n)
		created                       = make([]time.Time, n)
		expires, confirmed, expiredAt = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	)
	for i, p := range ps {
		c[i], e[i], id[i], status[i], merchant[i] = p.CompanyID, p.Environment, p.PaymentID, p.Status, p.MerchantID
		mWallet[i], cWallet[i], txHash[i], url[i], errMsg[i] = p.MerchantWallet, p.CustomerWallet, p.TxHash, p.BlockExplorerURL, p.ErrorMessage
		hasCreated[i], amount[i], created[i] = p.HasCreated, p.AmountMicros, p.CreatedAt
		expires[i], confirmed[i], expiredAt[i] = p.ExpiresAt, p.ConfirmedAt, p.ExpiredAt
	}
	_, err := tx.Exec(ctx, `UPDATE payments p SET status = t.status, has_created = t.has_created,
            merchant_id = t.merchant, merchant_wallet = t.m_wallet, customer_wallet = t.c_wallet,
            amount_micros = t.amount, tx_hash = t.tx_hash, block_explorer_url = t.url, error_message = t.err_msg,
            created_at = t.created, expires_at = t.expires, confirmed_at = t.confirmed, expired_at = t.expired_at,
            updated_at = GREATEST(t.created, t.confirmed, t.expired_at),
            expiry_published_at = CASE WHEN t.status = 'EXPIRED' THEN t.expires ELSE p.expiry_published_at END,
            facts = t.facts
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[],
                    $9::bigint[], $10::text[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[],
                    $15::timestamptz[], $16::timestamptz[], $17::bytea[])
          AS t(c, e, id, status, has_created, merchant, m_wallet, c_wallet, amount, tx_hash, url, err_msg,
               created, expires, confirmed, expired_at, facts)
        WHERE p.tenant_id = `+tenantOfTC+` AND p.company_id = t.c AND p.environment = t.e AND p.payment_id = t.id`,
		c, e, id, status, hasCreated, merchant, mWallet, cWallet, amount, txHash, url, errMsg,
		created, expires, confirmed, expiredAt, facts)
	if err != nil {
		return fmt.Errorf("updating payments: %w", err)
	}
	return nil
}
