package adapters_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/adapters"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/migrations"
)

// sessionStore is a fresh gateway database holding the company "Acme Ltd" with one secret key
// of env, the key a test opens dashboard sessions with.
type sessionStore struct {
	db        *pgxpool.Pool
	companies *adapters.CompanyRepository
	sessions  *adapters.DashboardSessions
	key       domain.APIKey
}

func newSessionStore(t *testing.T, env domain.Environment) sessionStore {
	t.Helper()
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrations.Set()), migrations.Schema)
	companies := adapters.NewCompanyRepository(db)
	company, err := domain.NewCompany("Acme Ltd", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := domain.NewAPIKey(company.ID(), domain.KeyType{Kind: domain.Secret, Environment: env}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := companies.AddCompany(t.Context(), company, []domain.APIKey{key}); err != nil {
		t.Fatal(err)
	}
	return sessionStore{db: db, companies: companies, sessions: adapters.NewDashboardSessions(db), key: key}
}

// A dashboard session works while its key is active and it is used; Check does not count as
// use; idle sessions expire and are deleted; a roll of its key ends it at once; sign-out
// deletes it; the masked keys never include a hash or a key.
func TestDashboardSessionLastsWhileUsedAndItsKeyIsActive(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := newSessionStore(t, domain.Test)
	db, companies, sessions, key := st.db, st.companies, st.sessions, st.key
	token := sha256.Sum256([]byte("token one"))
	if err := sessions.Create(ctx, token[:], key.ID()); err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Find(ctx, token[:], time.Hour)
	if err != nil || s.Principal.CompanyID != key.CompanyID() || s.Principal.Environment != domain.Test ||
		s.Principal.KeyKind != domain.Secret || s.Principal.KeyID != key.ID() {
		t.Fatalf("Find = %+v, %v", s, err)
	}
	age := func(d time.Duration) {
		t.Helper()
		if _, err := db.Exec(ctx, `UPDATE dashboard_sessions SET last_seen_at = now() - $1::interval`, d); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen := func() time.Time {
		t.Helper()
		var at time.Time
		if err := db.QueryRow(ctx, `SELECT last_seen_at FROM dashboard_sessions`).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}

	age(2 * time.Minute)
	before := lastSeen()
	if _, err := sessions.Check(ctx, token[:], time.Hour); err != nil || !lastSeen().Equal(before) {
		t.Fatalf("Check: %v; it moved last_seen_at from %v to %v", err, before, lastSeen())
	}
	if _, err := sessions.Find(ctx, token[:], time.Hour); err != nil || !lastSeen().After(before) {
		t.Fatalf("Find of a session last used 2 minutes ago: %v; last_seen_at stayed %v", err, lastSeen())
	}

	age(61 * time.Minute)
	if _, err := sessions.Find(ctx, token[:], time.Hour); !errors.Is(err, domain.ErrSessionExpired) {
		t.Fatalf("idle session: %v, want expired", err)
	}
	if _, err := sessions.Find(ctx, token[:], time.Hour); !errors.Is(err, domain.ErrSessionNotFound) {
		t.Fatalf("expired session again: %v, want not found (deleted)", err)
	}

	other := sha256.Sum256([]byte("token two"))
	if err := sessions.Create(ctx, other[:], key.ID()); err != nil {
		t.Fatal(err)
	}
	rolled, _, _ := domain.NewAPIKey(key.CompanyID(), key.Type(), time.Now())
	if err := companies.ReplaceKey(ctx, rolled); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Check(ctx, other[:], time.Hour); !errors.Is(err, domain.ErrSessionKeyRevoked) {
		t.Fatalf("session of a rolled key: %v, want revoked", err)
	}

	third := sha256.Sum256([]byte("token three"))
	if err := sessions.Create(ctx, third[:], rolled.ID()); err != nil {
		t.Fatal(err)
	}
	if err := sessions.Delete(ctx, third[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Find(ctx, third[:], time.Hour); !errors.Is(err, domain.ErrSessionNotFound) {
		t.Fatalf("signed-out session: %v", err)
	}
	if err := sessions.Create(ctx, third[:], uuid.New()); err == nil {
		t.Fatal("a session for a key that does not exist was stored")
	}

	keys, err := sessions.ActiveKeys(ctx, key.CompanyID())
	if err != nil || len(keys) != 1 || keys[0].DisplayPrefix != rolled.DisplayPrefix() || keys[0].Type != rolled.Type() {
		t.Fatalf("ActiveKeys = %+v, %v", keys, err)
	}
}

// Idle sessions are purged; fresh ones stay (the sessions of revoked keys: the next test).
func TestPurgeDeletesIdleDashboardSessionsAndKeepsFreshOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newSessionStore(t, domain.Live)
	db, sessions, key := st.db, st.sessions, st.key
	for _, name := range []string{"fresh", "idle"} {
		h := sha256.Sum256([]byte(name))
		if err := sessions.Create(ctx, h[:], key.ID()); err != nil {
			t.Fatal(err)
		}
	}
	idle := sha256.Sum256([]byte("idle"))
	if _, err := db.Exec(ctx, `UPDATE dashboard_sessions SET last_seen_at = now() - interval '13 hours' WHERE token_hash = $1`,
		idle[:]); err != nil {
		t.Fatal(err)
	}
	if n, err := sessions.DeleteIdle(ctx, 12*time.Hour); err != nil || n != 1 {
		t.Fatalf("DeleteIdle = %d, %v; want 1", n, err)
	}
	fresh := sha256.Sum256([]byte("fresh"))
	if _, err := sessions.Find(ctx, fresh[:], 12*time.Hour); err != nil {
		t.Fatalf("the fresh session was purged: %v", err)
	}
}

// A session of a rolled (revoked) key is purged even when it was just used: it can never be
// used again, and keeping it would keep the old key's id on a live-looking row.
func TestPurgeDeletesTheSessionsOfRevokedKeysHoweverFresh(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := newSessionStore(t, domain.Test)
	db, companies, sessions, key := st.db, st.companies, st.sessions, st.key
	old := sha256.Sum256([]byte("session of the old key"))
	if err := sessions.Create(ctx, old[:], key.ID()); err != nil {
		t.Fatal(err)
	}
	rolled, _, err := domain.NewAPIKey(key.CompanyID(), key.Type(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := companies.ReplaceKey(ctx, rolled); err != nil {
		t.Fatal(err)
	}
	current := sha256.Sum256([]byte("session of the new key"))
	if err := sessions.Create(ctx, current[:], rolled.ID()); err != nil {
		t.Fatal(err)
	}
	if n, err := sessions.DeleteIdle(ctx, 12*time.Hour); err != nil || n != 1 {
		t.Fatalf("DeleteIdle = %d, %v; want 1 (the revoked key's session)", n, err)
	}
	var left []uuid.UUID
	rows, err := db.Query(ctx, `SELECT key_id FROM dashboard_sessions`)
	if err != nil {
		t.Fatal(err)
	}
	if left, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != rolled.ID() {
		t.Fatalf("sessions left for keys %v, want only the new key's %v", left, rolled.ID())
	}
}
