package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain"
)

// MerchantRepository keeps merchants in the event store (one stream per merchant) and their
// read tables, both in the same transaction: a command's reply is visible to the next read.
type MerchantRepository struct {
	db    *pgxpool.Pool
	store *eventstore.Store
}

// NewMerchantRepository returns the repository on db (search_path merchant).
func NewMerchantRepository(db *pgxpool.Pool, store *eventstore.Store) *MerchantRepository {
	return &MerchantRepository{db: db, store: store}
}

var _ app.MerchantRepository = (*MerchantRepository)(nil)

// Create appends merchant.created, reserves the email for the company and environment and
// inserts the read row, in one transaction. ErrDuplicateEmail when the email is taken;
// app.ErrMerchantExists when the id is.
func (r *MerchantRepository) Create(ctx context.Context, ev domain.Created) (*domain.Merchant, error) {
	m := &domain.Merchant{}
	if err := m.Apply(ev); err != nil {
		return nil, err
	}
	err := pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO merchant_emails (company_id, environment, email_key, merchant_id)
            VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			ev.CompanyID, ev.Environment, domain.EmailKey(ev.Email), ev.MerchantID)
		if err != nil {
			return fmt.Errorf("reserving email: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return domain.ErrDuplicateEmail
		}
		return r.appendAndApply(ctx, tx, m.CompanyID(), m.Environment(), ev.MerchantID, eventstore.NoStream, ev)
	})
	if errors.Is(err, eventstore.ErrConcurrency) || pg.IsUniqueViolation(err, "merchants_pkey") {
		return nil, app.ErrMerchantExists
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// EmailTaken reports whether the company has a merchant with this email in env.
func (r *MerchantRepository) EmailTaken(ctx context.Context, companyID, env, email string) (bool, error) {
	var taken bool
	err := r.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM merchant_emails
        WHERE company_id = $1 AND environment = $2 AND email_key = $3)`, companyID, env, domain.EmailKey(email)).Scan(&taken)
	if err != nil {
		return false, fmt.Errorf("checking email: %w", err)
	}
	return taken, nil
}

// Get returns the merchant of id in scope (ErrNotFound otherwise).
func (r *MerchantRepository) Get(ctx context.Context, id uuid.UUID, scope app.Scope) (*domain.Merchant, error) {
	return r.load(ctx, r.db, id, scope, false)
}

// Update runs decide on the merchant locked for the transaction, appends the events it returns
// at the version it was loaded at, and applies them to the read tables. Concurrent commands on
// one merchant take turns on the row lock, so none is lost.
func (r *MerchantRepository) Update(ctx context.Context, id uuid.UUID, scope app.Scope,
	decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error) {
	var out *domain.Merchant
	err := pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		m, err := r.UpdateTx(ctx, tx, id, scope, decide)
		out = m
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateTx is Update inside the caller's transaction (the ledger consumer records its
// de-duplication in the same one).
func (r *MerchantRepository) UpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, scope app.Scope,
	decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error) {
	m, err := r.load(ctx, tx, id, scope, true)
	if err != nil {
		return nil, err
	}
	loaded := m.Version()
	evs, err := decide(m)
	if err != nil || len(evs) == 0 {
		return m, err
	}
	for _, ev := range evs {
		if err := m.Apply(ev); err != nil {
			return nil, err
		}
	}
	if err := r.appendAndApply(ctx, tx, m.CompanyID(), m.Environment(), id, loaded, evs...); err != nil {
		return nil, err
	}
	return m, nil
}

// HasEntry reports whether the merchant's ledger holds an entry of sourceKey.
func (r *MerchantRepository) HasEntry(ctx context.Context, tx pgx.Tx, id uuid.UUID, sourceKey string) (bool, error) {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM merchant_ledger WHERE merchant_id = $1 AND source_key = $2)`,
		id, sourceKey).Scan(&ok)
	return ok, err
}

// ExistingEntries returns which of sourceKeys the merchant's ledger already holds.
func (r *MerchantRepository) ExistingEntries(ctx context.Context, tx pgx.Tx, id uuid.UUID, sourceKeys []string) (map[string]bool, error) {
	rows, err := tx.Query(ctx, `SELECT source_key FROM merchant_ledger WHERE merchant_id = $1 AND source_key = ANY($2)`,
		id, sourceKeys)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, nil
}

// Events returns the domain events of a merchant's stream, for rebuilding it (tests compare the
// fold with the read row).
func (r *MerchantRepository) Events(ctx context.Context, id uuid.UUID) ([]domain.Event, error) {
	recs, err := r.store.ReadStream(ctx, r.db, StreamID(id), 0)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Event, 0, len(recs))
	for _, rec := range recs {
		ev, err := decodeRecorded(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

const selectMerchant = `SELECT id, company_id, environment, name, email, wallet_address, wallet_user_id, status,
    balance_micros, version, created_at, updated_at FROM merchants WHERE id = $1`

func (r *MerchantRepository) load(ctx context.Context, q eventstore.Querier, id uuid.UUID, scope app.Scope,
	lock bool) (*domain.Merchant, error) {
	sql := selectMerchant
	if lock {
		sql += " FOR UPDATE"
	}
	var (
		s       domain.Snapshot
		status  string
		balance int64
	)
	err := q.QueryRow(ctx, sql, id).Scan(&s.ID, &s.CompanyID, &s.Environment, &s.Name, &s.Email, &s.WalletAddress,
		&s.WalletUserID, &status, &balance, &s.Version, &s.CreatedAt, &s.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("loading merchant %s: %w", id, err)
	}
	if !scope.Admits(s.CompanyID, s.Environment) {
		return nil, domain.ErrNotFound
	}
	s.Status, s.Balance = domain.Status(status), money.FromMicros(balance)
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return domain.Restore(s), nil
}

// appendAndApply appends evs to the merchant's stream at version expected and applies them to
// the read tables; the caller's transaction holds both.
func (r *MerchantRepository) appendAndApply(ctx context.Context, tx pgx.Tx, companyID, env string, id uuid.UUID,
	expected int64, evs ...domain.Event) error {
	encoded := make([]eventstore.Event, len(evs))
	for i, ev := range evs {
		e, err := encode(ctx, companyID, env, ev)
		if err != nil {
			return err
		}
		encoded[i] = e
	}
	if _, err := r.store.AppendTx(ctx, tx, StreamID(id), expected, encoded...); err != nil {
		return err
	}
	for i, ev := range evs {
		if err := applyToReadTables(ctx, tx, ev, expected+int64(i)+1); err != nil {
			return err
		}
	}
	return nil
}

// applyToReadTables is the projection of one event at stream version version.
func applyToReadTables(ctx context.Context, tx pgx.Tx, ev domain.Event, version int64) error {
	var err error
	switch e := ev.(type) {
	case domain.Created:
		_, err = tx.Exec(ctx, `INSERT INTO merchants (id, company_id, environment, name, email, wallet_address,
            wallet_user_id, status, balance_micros, version, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10, $10)`,
			e.MerchantID, e.CompanyID, e.Environment, e.Name, e.Email, e.WalletAddress, e.WalletUserID,
			string(domain.StatusActive), version, e.At)
	case domain.StatusChanged:
		_, err = tx.Exec(ctx, `UPDATE merchants SET status = $2, updated_at = $3, version = $4 WHERE id = $1`,
			e.MerchantID, string(e.To), e.At, version)
	case domain.LedgerEntryRecorded:
		_, err = tx.Exec(ctx, `INSERT INTO merchant_ledger (id, merchant_id, seq, type, amount_micros,
            balance_before_micros, balance_after_micros, payment_id, tx_hash, status, description, source_key, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			e.EntryID, e.MerchantID, version, string(e.Type), e.Amount.Micros(), e.BalanceBefore.Micros(),
			e.BalanceAfter.Micros(), e.PaymentID, e.TxHash, e.Status, e.Description, e.SourceKey(), e.At)
		if err == nil {
			_, err = tx.Exec(ctx, `UPDATE merchants SET balance_micros = $2, version = $3 WHERE id = $1`,
				e.MerchantID, e.BalanceAfter.Micros(), version)
		}
	default:
		err = fmt.Errorf("unknown merchant event %T", ev)
	}
	if err != nil {
		return fmt.Errorf("updating read tables: %w", err)
	}
	return nil
}
