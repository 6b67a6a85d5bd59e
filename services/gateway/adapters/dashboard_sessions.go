package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/gateway/domain"
)

// DashboardSessions stores dashboard sessions in the gateway schema (migration 00003): the
// SHA-256 of each session token and the API key it was opened with. The idle clock is the
// database's, so that every gateway replica agrees on when a session expires.
type DashboardSessions struct {
	db *pgxpool.Pool
	// touchEvery bounds how often a session's last_seen_at is written: reads within it cost
	// no write.
	touchEvery time.Duration
}

// NewDashboardSessions returns the store on db (search_path gateway).
func NewDashboardSessions(db *pgxpool.Pool) *DashboardSessions {
	return &DashboardSessions{db: db, touchEvery: time.Minute}
}

// Create stores a new session for the active key keyID.
func (s *DashboardSessions) Create(ctx context.Context, tokenHash []byte, keyID uuid.UUID) error {
	_, err := s.db.Exec(ctx, `INSERT INTO dashboard_sessions (token_hash, key_id) VALUES ($1, $2)`, tokenHash, keyID)
	if err != nil {
		return fmt.Errorf("creating dashboard session: %w", err)
	}
	return nil
}

// Find returns the session of tokenHash and marks it used: domain.ErrSessionNotFound,
// ErrSessionExpired (idle longer than idle; the row is deleted) or ErrSessionKeyRevoked (its
// key was rolled; the row is deleted) otherwise.
func (s *DashboardSessions) Find(ctx context.Context, tokenHash []byte, idle time.Duration) (domain.DashboardSession, error) {
	return s.find(ctx, tokenHash, idle, true)
}

// Check is Find without marking the session used: a page left open (its live updates) does
// not keep a session alive.
func (s *DashboardSessions) Check(ctx context.Context, tokenHash []byte, idle time.Duration) (domain.DashboardSession, error) {
	return s.find(ctx, tokenHash, idle, false)
}

func (s *DashboardSessions) find(ctx context.Context, tokenHash []byte, idle time.Duration, touch bool) (domain.DashboardSession, error) {
	var (
		sess     domain.DashboardSession
		kind     string
		env      string
		revoked  bool
		expired  bool
		stale    bool
		lastSeen time.Time
	)
	err := s.db.QueryRow(ctx, `SELECT k.id, k.company_id, k.kind, k.environment, k.revoked_at IS NOT NULL,
            s.last_seen_at, s.last_seen_at <= now() - $2::interval, s.last_seen_at <= now() - $3::interval
        FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
        WHERE s.token_hash = $1`, tokenHash, idle, s.touchEvery).
		Scan(&sess.Principal.KeyID, &sess.Principal.CompanyID, &kind, &env, &revoked, &lastSeen, &expired, &stale)
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, domain.ErrSessionNotFound
	}
	if err != nil {
		return sess, fmt.Errorf("finding dashboard session: %w", err)
	}
	sess.Principal.KeyKind, sess.Principal.Environment = domain.KeyKind(kind), domain.Environment(env)
	sess.LastSeenAt = lastSeen
	switch {
	case revoked:
		return sess, s.end(ctx, tokenHash, domain.ErrSessionKeyRevoked)
	case expired:
		return sess, s.end(ctx, tokenHash, domain.ErrSessionExpired)
	case stale && touch:
		if _, err := s.db.Exec(ctx, `UPDATE dashboard_sessions SET last_seen_at = now() WHERE token_hash = $1`,
			tokenHash); err != nil {
			return sess, fmt.Errorf("refreshing dashboard session: %w", err)
		}
	}
	return sess, nil
}

// end deletes the session and returns why it ended.
func (s *DashboardSessions) end(ctx context.Context, tokenHash []byte, why error) error {
	if err := s.Delete(ctx, tokenHash); err != nil {
		return err
	}
	return why
}

// Delete removes the session (sign-out); deleting a missing session is not an error.
func (s *DashboardSessions) Delete(ctx context.Context, tokenHash []byte) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("deleting dashboard session: %w", err)
	}
	return nil
}

// DeleteIdle removes the sessions idle longer than idle and those of revoked keys, and returns
// how many it removed.
func (s *DashboardSessions) DeleteIdle(ctx context.Context, idle time.Duration) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM dashboard_sessions s
        WHERE s.last_seen_at <= now() - $1::interval
           OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id AND k.revoked_at IS NOT NULL)`, idle)
	if err != nil {
		return 0, fmt.Errorf("purging dashboard sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ActiveKeys returns the company's active API keys, masked (type and display prefix only).
func (s *DashboardSessions) ActiveKeys(ctx context.Context, company uuid.UUID) ([]domain.MaskedKey, error) {
	rows, err := s.db.Query(ctx, `SELECT kind, environment, display_prefix, created_at FROM api_keys
        WHERE company_id = $1 AND revoked_at IS NULL ORDER BY environment DESC, kind DESC`, company)
	if err != nil {
		return nil, fmt.Errorf("listing api keys: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.MaskedKey, error) {
		var (
			k         domain.MaskedKey
			kind, env string
		)
		err := row.Scan(&kind, &env, &k.DisplayPrefix, &k.CreatedAt)
		k.Type = domain.KeyType{Kind: domain.KeyKind(kind), Environment: domain.Environment(env)}
		return k, err
	})
}
