package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	merchantv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant/v1"
	"github.com/payplat/platform/services/gateway/domain"
)

// The dashboard's merchant reads (issue 18): pages of the list with each merchant's status, one
// merchant with the reason of a platform status, and pages of a ledger. They read the merchant
// service's read tables and event store like the API's reads, read-only.

const dashboardMerchantColumns = `id::text, name, email, wallet_address, balance_micros, created_at, status, updated_at`

func scanDashboardMerchant(row pgx.CollectableRow) (domain.DashboardMerchant, error) {
	var (
		m       domain.DashboardMerchant
		balance int64
	)
	err := row.Scan(&m.ID, &m.Name, &m.Email, &m.WalletAddress, &balance, &m.CreatedAt, &m.Status, &m.UpdatedAt)
	m.Balance = money.FromMicros(balance).String()
	return m, err
}

// Page returns a page of the company's merchants in env, newest first (the list index), and
// whether more follow; merchants with a platform status carry its reason.
func (m *Merchants) Page(ctx context.Context, p domain.Principal, limit, offset int) ([]domain.DashboardMerchant, bool, error) {
	rows, err := m.db.Query(ctx, `SELECT `+dashboardMerchantColumns+` FROM merchant.merchants
        WHERE company_id = $1 AND environment = $2
        ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
		p.CompanyID.String(), string(p.Environment), limit+1, offset)
	if err != nil {
		return nil, false, fmt.Errorf("listing merchants: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDashboardMerchant)
	if err != nil {
		return nil, false, fmt.Errorf("listing merchants: %w", err)
	}
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	if err := m.fillStatusReasons(ctx, list); err != nil {
		return nil, false, err
	}
	return list, more, nil
}

// Count returns how many merchants the company has in env.
func (m *Merchants) Count(ctx context.Context, p domain.Principal) (int, error) {
	var n int
	err := m.db.QueryRow(ctx, `SELECT count(*) FROM merchant.merchants WHERE company_id = $1 AND environment = $2`,
		p.CompanyID.String(), string(p.Environment)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting merchants: %w", err)
	}
	return n, nil
}

// Get returns one of the company's merchants in env; domain.ErrNotFound for another tenant's
// or an id that is not a UUID.
func (m *Merchants) Get(ctx context.Context, p domain.Principal, merchantID string) (domain.DashboardMerchant, error) {
	id, err := uuid.Parse(merchantID)
	if err != nil {
		return domain.DashboardMerchant{}, domain.ErrNotFound
	}
	rows, err := m.db.Query(ctx, `SELECT `+dashboardMerchantColumns+` FROM merchant.merchants
        WHERE id = $1 AND company_id = $2 AND environment = $3`,
		pgtype.UUID{Bytes: id, Valid: true}, p.CompanyID.String(), string(p.Environment))
	if err != nil {
		return domain.DashboardMerchant{}, fmt.Errorf("reading merchant: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDashboardMerchant)
	if err != nil {
		return domain.DashboardMerchant{}, fmt.Errorf("reading merchant: %w", err)
	}
	if len(list) == 0 {
		return domain.DashboardMerchant{}, domain.ErrNotFound
	}
	if err := m.fillStatusReasons(ctx, list); err != nil {
		return domain.DashboardMerchant{}, err
	}
	return list[0], nil
}

// fillStatusReasons reads, for the merchants of list with a platform status, the reason of
// their last status change: the merchants table keeps no reason, the merchant's
// merchant.status_changed event does (one indexed read per stream, newest version first).
func (m *Merchants) fillStatusReasons(ctx context.Context, list []domain.DashboardMerchant) error {
	var streams []string
	at := map[string]int{}
	for i, mm := range list {
		if domain.IsPlatformStatus(mm.Status) {
			s := "merchant-" + mm.ID
			streams = append(streams, s)
			at[s] = i
		}
	}
	if len(streams) == 0 {
		return nil
	}
	rows, err := m.db.Query(ctx, `SELECT DISTINCT ON (stream_id) stream_id, payload FROM merchant.events
        WHERE stream_id = ANY($1) AND event_type = 'merchant.status_changed'
        ORDER BY stream_id, stream_version DESC`, streams)
	if err != nil {
		return fmt.Errorf("reading merchant status reasons: %w", err)
	}
	var (
		stream  string
		payload []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&stream, &payload}, func() error {
		var ev merchantv1.MerchantStatusChanged
		if err := events.Unmarshal(payload, &ev); err != nil {
			return fmt.Errorf("decoding %s: %w", stream, err)
		}
		list[at[stream]].StatusReason = ev.GetReason()
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading merchant status reasons: %w", err)
	}
	return nil
}

// LedgerPage returns entries offset to offset+limit of the merchant's ledger, newest first,
// with the total count, in one repeatable-read snapshot; domain.ErrNotFound unless the merchant
// is the principal company's in its environment.
func (m *Merchants) LedgerPage(ctx context.Context, p domain.Principal, merchantID string, limit, offset int) (domain.MerchantLedger, error) {
	id, err := uuid.Parse(merchantID)
	if err != nil {
		return domain.MerchantLedger{}, domain.ErrNotFound
	}
	l := domain.MerchantLedger{MerchantID: id.String()}
	// As pgtype.UUID: pgx encodes a uuid.UUID through its text form, a failed binary encode and
	// a re-parse.
	pid := pgtype.UUID{Bytes: id, Valid: true}
	err = pgx.BeginTxFunc(ctx, m.db, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead},
		func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `SELECT name, (SELECT count(*) FROM merchant.merchant_ledger WHERE merchant_id = $1)
                FROM merchant.merchants WHERE id = $1 AND company_id = $2 AND environment = $3`,
				pid, p.CompanyID.String(), string(p.Environment)).Scan(&l.MerchantName, &l.TotalCount)
			if errors.Is(err, pgx.ErrNoRows) {
				return domain.ErrNotFound
			}
			if err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT id::text, type, amount_micros, balance_before_micros,
                balance_after_micros, payment_id, status, description, created_at
                FROM merchant.merchant_ledger WHERE merchant_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`,
				pid, limit, offset)
			if err != nil {
				return err
			}
			l.Entries, err = pgx.CollectRows(rows, scanLedgerEntry)
			return err
		})
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		err = fmt.Errorf("reading merchant ledger: %w", err)
	}
	return l, err
}
