package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/gateway/domain"
)

// IdempotencyRepository keeps Idempotency-Keys and the first response to each in
// gateway.idempotency_keys. It relies on PostgreSQL for mutual exclusion (one row per scope and
// key, claimed with one atomic statement), so it is safe across gateway replicas. Keys are
// stored hashed and response bodies sealed with a key derived from the Idempotency-Key and the
// server secret (see idempotencySecrets), because a stored response may hold secrets such as
// new API keys.
type IdempotencyRepository struct {
	db        *pgxpool.Pool
	secret    []byte
	lease     time.Duration
	retention time.Duration
}

// NewIdempotencyRepository returns a repository on db whose stored keys and responses are bound
// to secret (IDEMPOTENCY_SECRET; every gateway replica must have the same). A request in flight
// holds its key for lease; past that it is presumed dead and a retry with the same body may take
// the key over. Completed keys are forgotten after retention.
func NewIdempotencyRepository(db *pgxpool.Pool, secret []byte, lease, retention time.Duration) *IdempotencyRepository {
	return &IdempotencyRepository{db: db, secret: secret, lease: lease, retention: retention}
}

// claimSQL inserts the key, or takes over a row whose holder is presumed dead (same request) or
// that has expired, and returns a row only when this caller now holds the key.
const claimSQL = `
INSERT INTO idempotency_keys (scope, key_hash, fingerprint, owner, locked_until)
VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
ON CONFLICT (scope, key_hash) DO UPDATE SET
    fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner,
    status_code = NULL, response_headers = NULL, response_body = NULL,
    created_at = now(), locked_until = EXCLUDED.locked_until, completed_at = NULL
WHERE (idempotency_keys.completed_at IS NULL AND idempotency_keys.locked_until < now()
       AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
   OR idempotency_keys.created_at < now() - make_interval(secs => $6)
RETURNING owner`

// Begin claims key for the request with fingerprint. It returns the owner token when the caller
// now holds the key and must run the request, or the record of the earlier use otherwise.
func (s *IdempotencyRepository) Begin(ctx context.Context, scope, key string, fingerprint []byte) (
	uuid.UUID, *domain.IdempotencyRecord, error) {
	sec, err := deriveIdempotencySecrets(s.secret, scope, key)
	if err != nil {
		return uuid.Nil, nil, err
	}
	// The earlier holder may release the key between our claim and our read; then claim again.
	for range 3 {
		owner := uuid.New()
		err := s.db.QueryRow(ctx, claimSQL, scope, sec.id, fingerprint, owner,
			s.lease.Seconds(), s.retention.Seconds()).Scan(&owner)
		if err == nil {
			return owner, nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return uuid.Nil, nil, fmt.Errorf("claiming idempotency key: %w", err)
		}
		rec, err := s.read(ctx, scope, sec)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return uuid.Nil, nil, err
		}
		return uuid.Nil, rec, nil
	}
	return uuid.Nil, nil, errors.New("claiming idempotency key: contended")
}

func (s *IdempotencyRepository) read(ctx context.Context, scope string, sec idempotencySecrets) (
	*domain.IdempotencyRecord, error) {
	var (
		rec     domain.IdempotencyRecord
		status  *int
		headers map[string]string
		body    []byte
	)
	err := s.db.QueryRow(ctx, `SELECT fingerprint, status_code, response_headers, response_body
		FROM idempotency_keys WHERE scope = $1 AND key_hash = $2`, scope, sec.id).
		Scan(&rec.Fingerprint, &status, &headers, &body)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("reading idempotency key: %w", err)
	}
	if status != nil {
		plain, err := sec.open(body)
		if err != nil {
			return nil, err
		}
		rec.Response = &domain.StoredResponse{Status: *status, Header: headers, Body: plain}
	}
	return &rec, nil
}

// Complete stores the response of the request holding key as owner.
func (s *IdempotencyRepository) Complete(ctx context.Context, scope, key string, owner uuid.UUID,
	resp domain.StoredResponse) error {
	sec, err := deriveIdempotencySecrets(s.secret, scope, key)
	if err != nil {
		return err
	}
	headers, err := json.Marshal(resp.Header)
	if err != nil {
		return fmt.Errorf("encoding response headers: %w", err)
	}
	sealed, err := sec.seal(resp.Body)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `UPDATE idempotency_keys
		SET status_code = $4, response_headers = $5, response_body = $6, completed_at = now()
		WHERE scope = $1 AND key_hash = $2 AND owner = $3 AND completed_at IS NULL`,
		scope, sec.id, owner, resp.Status, headers, sealed)
	if err != nil {
		return fmt.Errorf("storing idempotent response: %w", err)
	}
	return nil
}

// Release forgets key, held as owner, so that the request can be retried with it.
func (s *IdempotencyRepository) Release(ctx context.Context, scope, key string, owner uuid.UUID) error {
	sec, err := deriveIdempotencySecrets(s.secret, scope, key)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE scope = $1 AND key_hash = $2 AND owner = $3 AND completed_at IS NULL`,
		scope, sec.id, owner)
	if err != nil {
		return fmt.Errorf("releasing idempotency key: %w", err)
	}
	return nil
}

// Purge deletes the keys older than the retention, which would otherwise only be reclaimed
// when reused. It returns how many it deleted.
func (s *IdempotencyRepository) Purge(ctx context.Context) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE created_at < now() - make_interval(secs => $1)`, s.retention.Seconds())
	if err != nil {
		return 0, fmt.Errorf("purging idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
