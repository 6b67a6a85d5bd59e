// Package adapters implements the gateway's storage on PostgreSQL (schema gateway).
package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/gateway/domain"
)

// CompanyRepository stores companies and their API keys.
type CompanyRepository struct {
	db *pgxpool.Pool
}

// NewCompanyRepository returns a repository on db, whose search_path is the gateway schema.
func NewCompanyRepository(db *pgxpool.Pool) *CompanyRepository {
	return &CompanyRepository{db: db}
}

// AddCompany inserts the company and its keys in one transaction.
func (r *CompanyRepository) AddCompany(ctx context.Context, c domain.Company, keys []domain.APIKey) error {
	return pg.InTx(ctx, r.db, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO companies (id, name, created_at) VALUES ($1, $2, $3)`,
			c.ID(), c.Name(), c.CreatedAt())
		if err != nil {
			return fmt.Errorf("inserting company: %w", err)
		}
		for _, k := range keys {
			if err := insertKey(ctx, tx, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReplaceKey revokes the active key of key's company and type and inserts key, in one
// transaction that holds the company row so that concurrent rolls take turns.
func (r *CompanyRepository) ReplaceKey(ctx context.Context, key domain.APIKey) error {
	return pg.InTx(ctx, r.db, func(tx pgx.Tx) error {
		var id uuid.UUID
		err := tx.QueryRow(ctx, `SELECT id FROM companies WHERE id = $1 FOR NO KEY UPDATE`,
			key.CompanyID()).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return domain.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("locking company: %w", err)
		}
		t := key.Type()
		_, err = tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $4
			WHERE company_id = $1 AND kind = $2 AND environment = $3 AND revoked_at IS NULL`,
			key.CompanyID(), string(t.Kind), string(t.Environment), key.CreatedAt())
		if err != nil {
			return fmt.Errorf("revoking previous key: %w", err)
		}
		return insertKey(ctx, tx, key)
	})
}

func insertKey(ctx context.Context, tx pgx.Tx, k domain.APIKey) error {
	t := k.Type()
	_, err := tx.Exec(ctx, `INSERT INTO api_keys
		(id, company_id, kind, environment, display_prefix, key_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID(), k.CompanyID(), string(t.Kind), string(t.Environment), k.DisplayPrefix(), k.Hash(),
		k.CreatedAt())
	if err != nil {
		return fmt.Errorf("inserting %s key: %w", t, err)
	}
	return nil
}

// ListCompanies returns every company, newest first.
func (r *CompanyRepository) ListCompanies(ctx context.Context) ([]domain.Company, error) {
	rows, err := r.db.Query(ctx, `SELECT id, name, created_at FROM companies
		ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("querying companies: %w", err)
	}
	companies, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Company, error) {
		var (
			id        uuid.UUID
			name      string
			createdAt time.Time
		)
		err := row.Scan(&id, &name, &createdAt)
		return domain.UnmarshalCompanyFromDatabase(id, name, createdAt), err
	})
	if err != nil {
		return nil, fmt.Errorf("reading companies: %w", err)
	}
	return companies, nil
}

// FindKeyByHash returns the key whose SHA-256 is hash, revoked or not; domain.ErrNotFound when
// there is none.
func (r *CompanyRepository) FindKeyByHash(ctx context.Context, hash []byte) (domain.APIKey, error) {
	var (
		id, companyID      uuid.UUID
		kind, env, display string
		storedHash         []byte
		createdAt          time.Time
		revokedAt          *time.Time
	)
	err := r.db.QueryRow(ctx, `SELECT id, company_id, kind, environment, display_prefix, key_hash,
		created_at, revoked_at FROM api_keys WHERE key_hash = $1`, hash).
		Scan(&id, &companyID, &kind, &env, &display, &storedHash, &createdAt, &revokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.APIKey{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.APIKey{}, fmt.Errorf("querying api key: %w", err)
	}
	t := domain.KeyType{Kind: domain.KeyKind(kind), Environment: domain.Environment(env)}
	return domain.UnmarshalAPIKeyFromDatabase(id, companyID, t, display, storedHash, createdAt,
		revokedAt), nil
}
