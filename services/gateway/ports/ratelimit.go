package ports

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payplat/platform/pkg/ratelimit"
)

// RateLimit is one token bucket: Rate requests a second on average, up to Burst at once. A
// Rate of 0 turns the limit off.
type RateLimit = ratelimit.Limit

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
	classes  map[routeClass]*ratelimit.Keyed[string]
	ipHeader string
	now      func() time.Time
}

// sweepEvery bounds how often a class's buckets are swept of full ones.
const sweepEvery = 10 * time.Second

func newLimiter(l RateLimits) *limiter {
	classes := map[routeClass]*ratelimit.Keyed[string]{}
	for class, lim := range map[routeClass]RateLimit{classReads: l.Reads, classWrites: l.Writes, classSDK: l.SDK,
		classAnonymous: l.Anonymous} {
		classes[class] = ratelimit.NewKeyed[string](lim, sweepEvery)
	}
	return &limiter{classes: classes, ipHeader: l.ClientIPHeader, now: time.Now}
}

// verdict is a bucket's answer to one request.
type verdict struct {
	ratelimit.Verdict
	class routeClass
	limit RateLimit
}

// take draws a token for subject (an API key's id, or a client address) from its bucket of
// class. ok is false when the class is not limited.
func (l *limiter) take(class routeClass, subject string) (v verdict, ok bool) {
	k := l.classes[class]
	if k.Limit().Off() {
		return verdict{}, false
	}
	return verdict{Verdict: k.Take(subject, l.now()), class: class, limit: k.Limit()}, true
}

// exhausted reports whether subject's bucket of class is empty now, without drawing from it.
func (l *limiter) exhausted(class routeClass, subject string) (v verdict, empty bool) {
	k := l.classes[class]
	if k.Limit().Off() {
		return verdict{}, false
	}
	v = verdict{Verdict: k.Peek(subject, l.now()), class: class, limit: k.Limit()}
	return v, !v.Allowed
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
	remaining := max(int(math.Floor(v.Tokens)), 0)
	refill := int(math.Ceil((float64(max(v.limit.Burst, 1)) - v.Tokens) / v.limit.Rate))
	h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", v.class, remaining, max(refill, 0)))
	if !v.Allowed {
		h.Set("Retry-After", strconv.Itoa(max(int(math.Ceil(v.Wait.Seconds())), 1)))
	}
}

// errRateLimited is the error of a request over its budget.
type errRateLimited struct{ retryAfter string }

func (e errRateLimited) Error() string {
	return "too many requests: retry after " + e.retryAfter + " s"
}

// refuse answers 429 RATE_LIMITED with the headers of v.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, v verdict) {
	v.Allowed = false
	v.setHeaders(w.Header())
	s.writeError(w, r, errRateLimited{retryAfter: w.Header().Get("Retry-After")})
}
