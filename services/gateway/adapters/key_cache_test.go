package adapters

import (
	"context"
	"crypto/sha256"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// fakeKeys is a KeyRepository holding one key; lookups can be held up with block.
type fakeKeys struct {
	key     domain.APIKey
	lookups atomic.Int64
	block   chan struct{} // when set, each lookup waits for a value
	entered chan struct{}
}

func (f *fakeKeys) FindKeyByHash(_ context.Context, hash []byte) (domain.APIKey, error) {
	f.lookups.Add(1)
	if f.block != nil {
		f.entered <- struct{}{}
		<-f.block
	}
	if string(hash) != string(f.key.Hash()) {
		return domain.APIKey{}, domain.ErrNotFound
	}
	return f.key, nil
}

func (f *fakeKeys) ReplaceKey(context.Context, domain.APIKey) error {
	revoked := time.Now()
	k := f.key
	f.key = domain.UnmarshalAPIKeyFromDatabase(k.ID(), k.CompanyID(), k.Type(), k.DisplayPrefix(), k.Hash(), k.CreatedAt(), &revoked)
	return nil
}

func newFakeKeys(t *testing.T) (*fakeKeys, []byte) {
	t.Helper()
	key, plain, err := domain.NewAPIKey(uuid.New(), domain.KeyType{Kind: domain.Secret, Environment: domain.Test}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(plain))
	return &fakeKeys{key: key}, sum[:]
}

func TestCachedKeysRemembersActiveKeysOnly(t *testing.T) {
	store, hash := newFakeKeys(t)
	c := NewCachedKeys(store, time.Hour, nil)
	for range 3 {
		if _, err := c.FindKeyByHash(t.Context(), hash); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.lookups.Load(); n != 1 {
		t.Fatalf("%d store lookups for 3 requests, want 1", n)
	}
	unknown := sha256.Sum256([]byte("unknown"))
	for range 2 {
		if _, err := c.FindKeyByHash(t.Context(), unknown[:]); err == nil {
			t.Fatal("unknown key found")
		}
	}
	if n := store.lookups.Load(); n != 3 {
		t.Fatalf("%d store lookups, want unknown keys looked up every time (3)", n)
	}
}

func TestCachedKeysExpire(t *testing.T) {
	store, hash := newFakeKeys(t)
	c := NewCachedKeys(store, time.Second, nil)
	now := time.Now()
	c.now = func() time.Time { return now }
	_, _ = c.FindKeyByHash(t.Context(), hash)
	now = now.Add(time.Second)
	_, _ = c.FindKeyByHash(t.Context(), hash)
	if n := store.lookups.Load(); n != 2 {
		t.Fatalf("%d store lookups, want 2 (the entry expired)", n)
	}
}

// A roll forgets the remembered key: the next lookup reads the store and sees it revoked.
func TestCachedKeysForgetOnReplace(t *testing.T) {
	store, hash := newFakeKeys(t)
	c := NewCachedKeys(store, time.Hour, nil)
	if _, err := c.FindKeyByHash(t.Context(), hash); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplaceKey(t.Context(), domain.APIKey{}); err != nil {
		t.Fatal(err)
	}
	k, err := c.FindKeyByHash(t.Context(), hash)
	if err != nil || k.RevokedAt() == nil {
		t.Fatalf("after the roll: revoked at %v, %v; want the revoked key from the store", k.RevokedAt(), err)
	}
	// Revoked keys are not remembered.
	_, _ = c.FindKeyByHash(t.Context(), hash)
	if n := store.lookups.Load(); n != 3 {
		t.Fatalf("%d store lookups, want 3", n)
	}
}

// A lookup that read the key before a forget does not store it: the key may have been revoked
// in between.
func TestCachedKeysLookupRacingForgetIsNotStored(t *testing.T) {
	store, hash := newFakeKeys(t)
	store.block, store.entered = make(chan struct{}), make(chan struct{})
	c := NewCachedKeys(store, time.Hour, nil)
	done := make(chan error)
	go func() {
		_, err := c.FindKeyByHash(context.Background(), hash)
		done <- err
	}()
	<-store.entered // the lookup has started
	c.Forget()
	store.block <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	store.block, store.entered = nil, nil
	_, _ = c.FindKeyByHash(t.Context(), hash)
	if n := store.lookups.Load(); n != 2 {
		t.Fatalf("%d store lookups, want 2 (the racing lookup must not have been remembered)", n)
	}
}

func TestCachedKeysDisabledWithZeroTTL(t *testing.T) {
	store, hash := newFakeKeys(t)
	c := NewCachedKeys(store, 0, nil)
	for range 2 {
		_, _ = c.FindKeyByHash(t.Context(), hash)
	}
	if n := store.lookups.Load(); n != 2 {
		t.Fatalf("%d store lookups, want 2", n)
	}
}
