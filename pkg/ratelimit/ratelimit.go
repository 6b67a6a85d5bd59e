// Package ratelimit keeps one token bucket (golang.org/x/time/rate) per key: an API key, a
// client address, a company. A bucket is created full when its key is first seen, and buckets
// that have filled up again are dropped now and then: a full bucket is the same as a new one,
// so nothing is forgotten, and memory holds only the keys seen within about Burst/Rate.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is one bucket's size: Rate tokens a second on average, up to Burst at once. A Rate of
// 0 (or less) turns the limit off.
type Limit struct {
	Rate  float64
	Burst int
}

// Off reports whether l limits nothing.
func (l Limit) Off() bool { return l.Rate <= 0 }

// Verdict is a bucket's answer.
type Verdict struct {
	Allowed bool
	// Tokens is what the bucket holds after the answer.
	Tokens float64
	// Wait is how long until the next token, when there is none (Tokens < 1).
	Wait time.Duration
}

// Keyed holds the buckets of one Limit, by key. Safe for concurrent use.
type Keyed[K comparable] struct {
	limit      Limit
	sweepEvery time.Duration

	mu        sync.Mutex
	buckets   map[K]*rate.Limiter
	lastSweep time.Time
}

// NewKeyed returns buckets of limit l, swept of full ones at most every sweepEvery.
func NewKeyed[K comparable](l Limit, sweepEvery time.Duration) *Keyed[K] {
	return &Keyed[K]{limit: l, sweepEvery: sweepEvery, buckets: map[K]*rate.Limiter{}}
}

// Limit returns the buckets' size.
func (k *Keyed[K]) Limit() Limit { return k.limit }

// Take draws a token from key's bucket at now. With the limit off every call is allowed.
func (k *Keyed[K]) Take(key K, now time.Time) Verdict {
	if k.limit.Off() {
		return Verdict{Allowed: true}
	}
	b := k.bucket(key, now)
	v := Verdict{Allowed: b.AllowN(now, 1)}
	v.Tokens = b.TokensAt(now)
	v.Wait = k.wait(v.Tokens)
	return v
}

// Peek returns key's bucket at now without drawing from it; a key without a bucket is full.
func (k *Keyed[K]) Peek(key K, now time.Time) Verdict {
	if k.limit.Off() {
		return Verdict{Allowed: true}
	}
	k.mu.Lock()
	b := k.buckets[key]
	k.mu.Unlock()
	if b == nil {
		return Verdict{Allowed: true, Tokens: float64(max(k.limit.Burst, 1))}
	}
	tokens := b.TokensAt(now)
	return Verdict{Allowed: tokens >= 1, Tokens: tokens, Wait: k.wait(tokens)}
}

// Len is the number of buckets held.
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

func (k *Keyed[K]) wait(tokens float64) time.Duration {
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / k.limit.Rate * float64(time.Second))
}

// bucket returns key's bucket, created full, after sweeping full buckets when one is due.
func (k *Keyed[K]) bucket(key K, now time.Time) *rate.Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.lastSweep) >= k.sweepEvery {
		k.lastSweep = now
		for key, b := range k.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(k.buckets, key)
			}
		}
	}
	b := k.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(k.limit.Rate), max(k.limit.Burst, 1))
		k.buckets[key] = b
	}
	return b
}
