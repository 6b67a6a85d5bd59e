package adapters_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/adapters"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/migrations"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

func newRepository(t *testing.T, lease, retention time.Duration) (*adapters.IdempotencyRepository, func(string, ...any)) {
	t.Helper()
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrations.Set()), migrations.Schema)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Exec(context.Background(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	return adapters.NewIdempotencyRepository(db, testSecret(), lease, retention), exec
}

// testSecret is a fresh IDEMPOTENCY_SECRET.
func testSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return []byte(hex.EncodeToString(b))
}

func TestIdempotencyKeyIsClaimedOncePerScopeAndCompletedOnlyByItsOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, _ := newRepository(t, time.Minute, time.Hour)
	fp := []byte("fingerprint")
	owner, rec, err := s.Begin(ctx, "admin", "k", fp)
	if err != nil || rec != nil || owner == uuid.Nil {
		t.Fatalf("first Begin = %v, %v, %v", owner, rec, err)
	}
	if _, rec, _ := s.Begin(ctx, "admin", "k", fp); rec == nil || rec.Response != nil {
		t.Fatalf("Begin while in flight = %+v", rec)
	}
	if o, rec, _ := s.Begin(ctx, "company:x:test", "k", fp); rec != nil || o == uuid.Nil {
		t.Fatal("another scope shares the key")
	}
	// A stale owner (taken over) cannot complete.
	if err := s.Complete(ctx, "admin", "k", uuid.New(), domain.StoredResponse{Status: 201}); err != nil {
		t.Fatal(err)
	}
	if _, rec, _ := s.Begin(ctx, "admin", "k", fp); rec.Response != nil {
		t.Fatal("a stranger completed the key")
	}
	want := domain.StoredResponse{Status: 201, Header: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"a":1}`)}
	if err := s.Complete(ctx, "admin", "k", owner, want); err != nil {
		t.Fatal(err)
	}
	_, rec, err = s.Begin(ctx, "admin", "k", fp)
	if err != nil || rec.Response == nil || rec.Response.Status != 201 || !bytes.Equal(rec.Response.Body, want.Body) ||
		rec.Response.Header["Content-Type"] != "application/json" || !bytes.Equal(rec.Fingerprint, fp) {
		t.Fatalf("replayed record = %+v, %v", rec, err)
	}
}

func TestReleasedKeysAreFreeAndLapsedOnesPassOnlyToTheSameRequest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, exec := newRepository(t, time.Minute, time.Hour)
	fp := []byte("fp")
	owner, _, _ := s.Begin(ctx, "admin", "released", fp)
	if err := s.Release(ctx, "admin", "released", owner); err != nil {
		t.Fatal(err)
	}
	if o, rec, _ := s.Begin(ctx, "admin", "released", fp); rec != nil || o == uuid.Nil {
		t.Fatal("released key not claimable")
	}

	// An in-flight key past its lease is taken over by the same request, not by another.
	first, _, _ := s.Begin(ctx, "admin", "dead", fp)
	exec(`UPDATE idempotency_keys SET locked_until = now() - interval '1 second'`)
	if _, rec, _ := s.Begin(ctx, "admin", "dead", []byte("other")); rec == nil {
		t.Fatal("another request took over a dead key")
	}
	second, rec, _ := s.Begin(ctx, "admin", "dead", fp)
	if rec != nil || second == first {
		t.Fatal("the same request could not take over a dead key")
	}
	// The presumed-dead first holder wakes up: it can neither release nor complete the key.
	_ = s.Release(ctx, "admin", "dead", first)
	_ = s.Complete(ctx, "admin", "dead", first, domain.StoredResponse{Status: 200})
	if _, rec, _ := s.Begin(ctx, "admin", "dead", fp); rec == nil || rec.Response != nil {
		t.Fatalf("the old holder changed the key: %+v", rec)
	}
}

func TestExpiredIdempotencyKeyIsReusableAndPurged(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, exec := newRepository(t, time.Minute, time.Hour)
	owner, _, _ := s.Begin(ctx, "admin", "old", []byte("a"))
	_ = s.Complete(ctx, "admin", "old", owner, domain.StoredResponse{Status: 201})
	owner, _, _ = s.Begin(ctx, "admin", "purged", []byte("a"))
	_ = s.Complete(ctx, "admin", "purged", owner, domain.StoredResponse{Status: 201})
	exec(`UPDATE idempotency_keys SET created_at = now() - interval '2 hours'`)
	// An expired key is a new key, even with another body.
	if o, rec, _ := s.Begin(ctx, "admin", "old", []byte("b")); rec != nil || o == uuid.Nil {
		t.Fatal("expired key not reusable")
	}
	n, err := s.Purge(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1", n, err)
	}
}

// A stored key and its sealed response are bound to the gateway's IDEMPOTENCY_SECRET, not only to
// the caller's Idempotency-Key (issue 16): someone who reads the table and guesses (or sees, in a
// proxy log) an Idempotency-Key finds neither the row nor the response, which may hold an API key
// or a webhook signing secret. A gateway with another secret does not see the key either.
func TestIdempotencyRepositoryBindsKeysToTheServerSecret(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrations.Set()), migrations.Schema)
	s := adapters.NewIdempotencyRepository(db, testSecret(), time.Minute, time.Hour)
	const scope, key, secret = "admin", "guessable-key-1", `{"sk_test":"sk_test_shown_once"}`
	owner, _, err := s.Begin(ctx, scope, key, []byte("fp"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, scope, key, owner, domain.StoredResponse{Status: 201, Body: []byte(secret)}); err != nil {
		t.Fatal(err)
	}

	// What the Idempotency-Key alone gives: HKDF of the key without the server secret.
	keyOnly := func(purpose string) []byte {
		k, err := hkdf.Key(sha256.New, []byte(key), nil, "payplat idempotency "+purpose+"\x00"+scope, 32)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	var hash, sealed []byte
	if err := db.QueryRow(ctx, `SELECT key_hash, response_body FROM idempotency_keys WHERE scope = $1`, scope).
		Scan(&hash, &sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(hash, keyOnly("id")) {
		t.Error("the stored key hash derives from the Idempotency-Key alone")
	}
	block, err := aes.NewCipher(keyOnly("seal"))
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	if n := aead.NonceSize(); len(sealed) > n {
		if plain, err := aead.Open(nil, sealed[:n], sealed[n:], hash); err == nil {
			t.Errorf("the stored response opens with the Idempotency-Key alone: %s", plain)
		}
	}
	if bytes.Contains(sealed, []byte("sk_test_shown_once")) {
		t.Error("the stored response is in clear")
	}

	// A gateway with another secret neither replays nor refuses: the key is unknown to it.
	other := adapters.NewIdempotencyRepository(db, testSecret(), time.Minute, time.Hour)
	if o, rec, err := other.Begin(ctx, scope, key, []byte("another body")); err != nil || rec != nil || o == uuid.Nil {
		t.Fatalf("another secret's Begin = %v, %+v, %v; want a fresh claim", o, rec, err)
	}
	// The right secret still replays.
	if _, rec, err := s.Begin(ctx, scope, key, []byte("fp")); err != nil || rec == nil || rec.Response == nil ||
		string(rec.Response.Body) != secret {
		t.Fatalf("replay = %+v, %v", rec, err)
	}
}
