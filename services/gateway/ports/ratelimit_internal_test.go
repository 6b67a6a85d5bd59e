package ports

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestRoutesFallIntoReadsWritesOrTheSDKClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		want         routeClass
	}{
		{http.MethodGet, "/api/v1/management/merchants", classReads},
		{http.MethodPost, "/api/v1/management/merchants/create", classWrites},
		{http.MethodPatch, "/api/v1/dashboard/pool/settings", classWrites},
		{http.MethodPost, "/api/v1/payments/process", classSDK},
	} {
		if got := classOf(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.path, got, tc.want)
		}
	}
}

// The IETF fields and Retry-After of a bucket, on a clock the test moves by hand.
func TestRateLimitHeadersTrackTheBucketAndRetryAfterOnceItIsEmpty(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(RateLimits{Writes: RateLimit{Rate: 2, Burst: 4}})
	l.now = func() time.Time { return now }
	for i := range 4 {
		v, ok := l.take(classWrites, "key")
		h := http.Header{}
		v.setHeaders(h)
		if !ok || !v.Allowed || h.Get("RateLimit") != fmt.Sprintf(`"writes";r=%d;t=%d`, 3-i, (i+2)/2) ||
			h.Get("RateLimit-Policy") != `"writes";q=4;w=2` || h.Get("Retry-After") != "" {
			t.Fatalf("request %d: %+v %v", i+1, h, ok)
		}
	}
	v, _ := l.take(classWrites, "key")
	h := http.Header{}
	v.setHeaders(h)
	if v.Allowed || h.Get("Retry-After") != "1" || h.Get("RateLimit") != `"writes";r=0;t=2` {
		t.Fatalf("over the limit: %+v", h)
	}
	now = now.Add(500 * time.Millisecond) // one token back
	if v, _ := l.take(classWrites, "key"); !v.Allowed {
		t.Fatal("a refilled token was refused")
	}
	if _, ok := l.take(classReads, "key"); ok {
		t.Fatal("a class without a rate was limited")
	}
}

// Full buckets are dropped at a sweep, and nothing is lost by it.
func TestRateLimitSweepDropsFullBuckets(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(RateLimits{Reads: RateLimit{Rate: 1, Burst: 2}})
	l.now = func() time.Time { return now }
	l.take(classReads, "a")
	l.take(classReads, "b")
	now = now.Add(sweepEvery)
	l.take(classReads, "c")
	if l.classes[classReads].Len() != 1 {
		t.Fatalf("%d buckets after the sweep, want 1 (c)", l.classes[classReads].Len())
	}
}

// BenchmarkRateLimitTake is the limiter's cost per request (one key, one bucket; and a
// different key each time, the map growing until its sweep).
func BenchmarkRateLimitTake(b *testing.B) {
	b.Run("one-key", func(b *testing.B) {
		l := newLimiter(RateLimits{Reads: RateLimit{Rate: 1e9, Burst: 1e9}})
		for b.Loop() {
			l.take(classReads, "key")
		}
	})
	b.Run("many-keys", func(b *testing.B) {
		l := newLimiter(RateLimits{Reads: RateLimit{Rate: 1e9, Burst: 1e9}})
		i := 0
		for b.Loop() {
			i++
			l.take(classReads, fmt.Sprint(i%100_000))
		}
	})
}
