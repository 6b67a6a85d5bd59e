package adapters

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/services/gateway/domain"
)

// KeysRevokedSubject is where a gateway announces that it revoked API keys, so that every
// gateway drops the keys it remembers (core NATS; the message carries nothing secret).
const KeysRevokedSubject = "gateway.api_keys.revoked"

// KeyRepository is the part of the company repository that holds API keys: what CachedKeys
// reads keys through and writes rolls through (and, caching, is itself).
type KeyRepository interface {
	FindKeyByHash(ctx context.Context, hash []byte) (domain.APIKey, error)
	ReplaceKey(ctx context.Context, key domain.APIKey) error
}

// CachedKeys remembers, for at most a TTL, the active keys the repository found, so that a request
// with a known key costs no database round trip. Only active keys are remembered: an unknown
// or revoked key is looked up on every request.
//
// Revocation stays prompt: a roll (ReplaceKey) forgets every remembered key once its
// transaction commits, here and, through KeysRevokedSubject, in every other gateway on the
// bus; a gateway that loses its NATS connection forgets everything when it reconnects, since it
// may have missed announcements. A lookup that started before a forget never stores what it
// read, so a key revoked while it was being looked up is not remembered. The TTL bounds what a
// lost announcement can cost.
type CachedKeys struct {
	repo KeyRepository
	ttl  time.Duration
	now  func() time.Time
	nc   *nats.Conn
	log  *slog.Logger

	mu    sync.RWMutex
	epoch uint64 // counts forgets; a lookup stores its key only if none happened meanwhile
	keys  map[[32]byte]cachedKey
}

type cachedKey struct {
	key     domain.APIKey
	expires time.Time
}

// maxCachedKeys bounds the cache; past it, expired entries are swept before adding one, and
// if none has expired the cache starts over.
const maxCachedKeys = 100_000

// NewCachedKeys returns repo's keys cached for ttl (0 or less: no cache, every lookup goes to
// repo). Until Connect, revocations are forgotten in this process only.
func NewCachedKeys(repo KeyRepository, ttl time.Duration, log *slog.Logger) *CachedKeys {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &CachedKeys{repo: repo, ttl: ttl, now: time.Now, log: log, keys: map[[32]byte]cachedKey{}}
}

// FindKeyByHash returns the key of hash, from the cache while it is fresh.
func (c *CachedKeys) FindKeyByHash(ctx context.Context, hash []byte) (domain.APIKey, error) {
	if c.ttl <= 0 || len(hash) != 32 {
		return c.repo.FindKeyByHash(ctx, hash)
	}
	h := [32]byte(hash)
	c.mu.RLock()
	e, ok := c.keys[h]
	epoch := c.epoch
	c.mu.RUnlock()
	if ok && c.now().Before(e.expires) {
		return e.key, nil
	}
	key, err := c.repo.FindKeyByHash(ctx, hash)
	if err != nil || key.RevokedAt() != nil {
		return key, err
	}
	c.mu.Lock()
	if c.epoch == epoch {
		if len(c.keys) >= maxCachedKeys {
			c.sweep()
		}
		c.keys[h] = cachedKey{key: key, expires: c.now().Add(c.ttl)}
	}
	c.mu.Unlock()
	return key, nil
}

// sweep drops expired entries, or all of them when none has expired. The caller holds mu.
func (c *CachedKeys) sweep() {
	now := c.now()
	for h, e := range c.keys {
		if !now.Before(e.expires) {
			delete(c.keys, h)
		}
	}
	if len(c.keys) >= maxCachedKeys {
		clear(c.keys)
	}
}

// ReplaceKey replaces the key in the repository, then forgets every remembered key here and
// announces the revocation to the other gateways.
func (c *CachedKeys) ReplaceKey(ctx context.Context, key domain.APIKey) error {
	if err := c.repo.ReplaceKey(ctx, key); err != nil {
		return err
	}
	c.Forget()
	if c.nc != nil {
		// Lost, the announcement costs at most the TTL: the other gateways then forget the
		// revoked key when its entry expires.
		if err := c.nc.Publish(KeysRevokedSubject, []byte(key.CompanyID().String())); err != nil {
			c.log.WarnContext(ctx, "announcing an api key revocation", "error", err)
		}
	}
	return nil
}

// Forget drops every remembered key, and keeps lookups in progress from storing theirs.
func (c *CachedKeys) Forget() {
	c.mu.Lock()
	c.epoch++
	clear(c.keys)
	c.mu.Unlock()
}

// Connect announces this gateway's rolls on nc and makes the cache forget every key whenever a
// gateway announces one. Call it once, before the cache serves requests; the subscription
// lasts as long as the connection. The connection's reconnect handler should call Forget.
func (c *CachedKeys) Connect(nc *nats.Conn) error {
	if _, err := nc.Subscribe(KeysRevokedSubject, func(*nats.Msg) { c.Forget() }); err != nil {
		return fmt.Errorf("subscribing to %s: %w", KeysRevokedSubject, err)
	}
	c.nc = nc
	return nil
}
