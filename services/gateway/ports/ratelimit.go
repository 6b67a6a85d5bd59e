package ports

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is one token bucket: Rate requests a second on average, up to Burst at once. A
// Rate of 0 turns the limit off.
type RateLimit struct {
	Rate  float64
	Burst int
}

// RateLimits are the budgets of the API (issue 17): one bucket per API key and route class
// (reads, writes, the SDK payment call), and one per client address for calls that present no
// valid credential (public routes, refused credentials). Health and metrics probes are never
// limited. Each gateway keeps its own buckets in memory (see the gateway README: with N
// replicas behind a balancer a key gets up to N times the budget).
type RateLimits struct {
	Reads, Writes, SDK, Anonymous RateLimit
	// ClientIPHeader, when set, names the header a trusted proxy writes the client's address
	// into (X-Real-IP, or X-Forwarded-For whose first entry is then used); empty uses the peer
	// address. Never set it without a proxy that overwrites the header.
	ClientIPHeader string
}

// routeClass is the bucket a route draws from.
type routeClass string

const (
	classReads     routeClass = "reads"
	classWrites    routeClass = "writes"
	classSDK       routeClass = "sdk"
	classAnonymous routeClass = "anonymous"
)

// sdkPath is the route of the SDK class: payments created from partners' apps.
const sdkPath = "/api/v1/payments/process"

// classOf decides a route's class from its method and path at registration.
func classOf(method, path string) routeClass {
	switch {
	case path == sdkPath:
		return classSDK
	case method == http.MethodGet || method == http.MethodHead:
		return classReads
	default:
		return classWrites
	}
}

// limiter holds the buckets of every class.
type limiter struct {
	limits   map[routeClass]RateLimit
	ipHeader string
	now      func() time.Time

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

func newLimiter(l RateLimits) *limiter {
	return &limiter{
		limits: map[routeClass]RateLimit{classReads: l.Reads, classWrites: l.Writes, classSDK: l.SDK,
			classAnonymous: l.Anonymous},
		ipHeader: l.ClientIPHeader,
		now:      time.Now,
		buckets:  map[string]*rate.Limiter{},
	}
}

// verdict is a bucket's answer to one request.
type verdict struct {
	class     routeClass
	limit     RateLimit
	allowed   bool
	tokens    float64 // left after this request
	retryWait time.Duration
}

// take draws a token for subject (an API key's id, or a client address) from its bucket of
// class. ok is false when the class is not limited.
func (l *limiter) take(class routeClass, subject string) (v verdict, ok bool) {
	lim := l.limits[class]
	if lim.Rate <= 0 {
		return verdict{}, false
	}
	now := l.now()
	b := l.bucket(class, subject, lim, now)
	v = verdict{class: class, limit: lim, allowed: b.AllowN(now, 1)}
	v.tokens = b.TokensAt(now)
	if !v.allowed {
		v.retryWait = time.Duration((1 - v.tokens) / lim.Rate * float64(time.Second))
	}
	return v, true
}

// exhausted reports whether subject's bucket of class is empty now, without drawing from it.
func (l *limiter) exhausted(class routeClass, subject string) (v verdict, empty bool) {
	lim := l.limits[class]
	if lim.Rate <= 0 {
		return verdict{}, false
	}
	l.mu.Lock()
	b := l.buckets[string(class)+"\x00"+subject]
	l.mu.Unlock()
	if b == nil {
		return verdict{}, false
	}
	now := l.now()
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return verdict{}, false
	}
	return verdict{class: class, limit: lim, tokens: tokens,
		retryWait: time.Duration((1 - tokens) / lim.Rate * float64(time.Second))}, true
}

// sweepEvery bounds how often the bucket map is swept of full buckets.
const sweepEvery = 10 * time.Second

// bucket returns subject's bucket of class, creating it full. Buckets that have filled up again
// are dropped now and then: a full bucket is the same as a new one, so nothing is forgotten,
// and the map holds only callers seen within about Burst/Rate seconds.
func (l *limiter) bucket(class routeClass, subject string, lim RateLimit, now time.Time) *rate.Limiter {
	key := string(class) + "\x00" + subject
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		l.lastSweep = now
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k)
			}
		}
	}
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(lim.Rate), max(lim.Burst, 1))
		l.buckets[key] = b
	}
	return b
}

// clientAddress is who an unauthenticated call is counted against.
func (l *limiter) clientAddress(r *http.Request) string {
	if l.ipHeader != "" {
		if v := strings.TrimSpace(strings.Split(r.Header.Get(l.ipHeader), ",")[0]); v != "" {
			return v
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// setHeaders writes the IETF RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers): the bucket as a quota of Burst requests per the
// seconds it takes to fill, and what is left now with the seconds until it is full again.
func (v verdict) setHeaders(h http.Header) {
	window := int(math.Ceil(float64(max(v.limit.Burst, 1)) / v.limit.Rate))
	h.Set("RateLimit-Policy", fmt.Sprintf("%q;q=%d;w=%d", v.class, max(v.limit.Burst, 1), max(window, 1)))
	remaining := max(int(math.Floor(v.tokens)), 0)
	refill := int(math.Ceil((float64(max(v.limit.Burst, 1)) - v.tokens) / v.limit.Rate))
	h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", v.class, remaining, max(refill, 0)))
	if !v.allowed {
		h.Set("Retry-After", strconv.Itoa(max(int(math.Ceil(v.retryWait.Seconds())), 1)))
	}
}

// errRateLimited is the error of a request over its budget.
type errRateLimited struct{ retryAfter string }

func (e errRateLimited) Error() string {
	return "too many requests: retry after " + e.retryAfter + " s"
}

// refuse answers 429 RATE_LIMITED with the headers of v.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, v verdict) {
	v.allowed = false
	v.setHeaders(w.Header())
	s.writeError(w, r, errRateLimited{retryAfter: w.Header().Get("Retry-After")})
}
