package app

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// RetryLimit is the token bucket of manual retries per company and environment: Rate a second
// on average, up to Burst at once. A Rate of 0 turns the limit off.
type RetryLimit struct {
	Rate  float64
	Burst int
}

// retrySweepEvery bounds how often the buckets are swept of full ones.
const retrySweepEvery = time.Minute

// retryLimiter keeps one bucket per company and environment. A manual retry is an outbound
// request the partner triggers at will, to a URL it chose: without a bound, the dispatcher
// would send as many as the API lets a key ask for. Each dispatcher keeps its own buckets (the
// gateway's requests are spread over the replicas), so N replicas allow up to N times the rate.
type retryLimiter struct {
	limit RetryLimit
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[domain.Target]*rate.Limiter
	lastSweep time.Time
}

func newRetryLimiter(l RetryLimit) *retryLimiter {
	return &retryLimiter{limit: l, now: time.Now, buckets: map[domain.Target]*rate.Limiter{}}
}

// take draws a token for t; when there is none it returns false and how long until there is.
func (l *retryLimiter) take(t domain.Target) (time.Duration, bool) {
	if l.limit.Rate <= 0 {
		return 0, true
	}
	now := l.now()
	b := l.bucket(t, now)
	if b.AllowN(now, 1) {
		return 0, true
	}
	return time.Duration((1 - b.TokensAt(now)) / l.limit.Rate * float64(time.Second)), false
}

// bucket returns t's bucket, created full. Full buckets are dropped now and then (a full
// bucket is the same as a new one), so the map holds only the companies that retried lately.
func (l *retryLimiter) bucket(t domain.Target, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= retrySweepEvery {
		l.lastSweep = now
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k)
			}
		}
	}
	b := l.buckets[t]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(l.limit.Rate), max(l.limit.Burst, 1))
		l.buckets[t] = b
	}
	return b
}
