package ports_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/payplat/platform/services/gateway/service"
)

// withRateLimits turns the rate limits on; a rate of one token per 1,000 s means no bucket
// refills while a test runs, so every count below is exact.
func withRateLimits(burst int) func(*setup) {
	return withConfig(func(c *service.Config) {
		c.RateLimits = service.RateLimitConfig{Reads: 0.001, ReadsBurst: burst, Writes: 0.001, WritesBurst: burst,
			SDK: 0.001, SDKBurst: burst, Anonymous: 0.001, AnonymousBurst: burst}
	})
}

func (g *gateway) keyGet(key, path string) response {
	return g.do(request{method: http.MethodGet, path: path, headers: map[string]string{"x-api-key": key}})
}

// A key gets Burst requests of a class, then 429 RATE_LIMITED with Retry-After and the IETF
// RateLimit-Policy and RateLimit fields; its other classes, and other keys, are untouched.
func TestRateLimitsApplyPerKeyAndClassAndAnswer429WithRetryAfter(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withRateLimits(3))
	a := g.createCompany("Acme")
	for i := range 3 {
		r := g.whoami(map[string]string{"x-api-key": a.Keys["sk_test"]})
		if r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
		if got, want := r.header.Get("RateLimit"), fmt.Sprintf(`"reads";r=%d;t=`, 2-i); !strings.HasPrefix(got, want) {
			t.Errorf("request %d: RateLimit %q, want %s…", i+1, got, want)
		}
		if got := r.header.Get("RateLimit-Policy"); got != `"reads";q=3;w=3000` {
			t.Errorf("RateLimit-Policy %q", got)
		}
	}
	r := g.whoami(map[string]string{"x-api-key": a.Keys["sk_test"]})
	assertError(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if got := r.header.Get("RateLimit"); !strings.HasPrefix(got, `"reads";r=0;t=`) {
		t.Errorf("RateLimit on 429: %q", got)
	}
	// The same key's writes, the same company's other key, another company: full buckets.
	w := g.do(request{method: http.MethodPost, path: "/api/v1/dashboard/webhooks/config", body: strings.NewReader(`{}`),
		headers: map[string]string{"x-api-key": a.Keys["sk_test"]}})
	if w.status == http.StatusTooManyRequests || !strings.HasPrefix(w.header.Get("RateLimit"), `"writes";r=2;`) {
		t.Errorf("writes after reads ran out: %d %q", w.status, w.header.Get("RateLimit"))
	}
	for _, key := range []string{a.Keys["sk_live"], g.createCompany("Other").Keys["sk_test"]} {
		if r := g.whoami(map[string]string{"x-api-key": key}); r.status != http.StatusOK ||
			!strings.HasPrefix(r.header.Get("RateLimit"), `"reads";r=2;`) {
			t.Errorf("another key: %d %q", r.status, r.header.Get("RateLimit"))
		}
	}
}

// One partner far over its limit does not slow another's requests: while A's requests are
// refused by the hundred from several goroutines, every one of B's is served, from B's own
// bucket (its RateLimit counts only B's requests).
func TestRateLimitOnePartnerDoesNotSlowAnother(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withRateLimits(40))
	a, b := g.createCompany("Noisy"), g.createCompany("Quiet")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := g.send(request{method: http.MethodGet, path: "/api/v1/management/whoami",
					headers: map[string]string{"x-api-key": a.Keys["sk_test"]}})
				if err == nil && r.status == http.StatusTooManyRequests {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}
		})
	}
	// B starts once A is over its limit.
	waitRefused := func(n int) bool {
		mu.Lock()
		defer mu.Unlock()
		return refused >= n
	}
	for !waitRefused(10) {
		if r := g.keyGet(a.Keys["sk_test"], "/api/v1/management/whoami"); r.status == http.StatusInternalServerError {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	for i := range 40 {
		r := g.keyGet(b.Keys["sk_test"], "/api/v1/management/whoami")
		if r.status != http.StatusOK {
			t.Fatalf("B's request %d while A is limited: %d %s", i+1, r.status, r.body)
		}
		if want := fmt.Sprintf(`"reads";r=%d;`, 39-i); !strings.HasPrefix(r.header.Get("RateLimit"), want) {
			t.Fatalf("B's request %d: RateLimit %q, want %s… (B's bucket alone)", i+1, r.header.Get("RateLimit"), want)
		}
	}
	close(stop)
	wg.Wait()
}

// Calls without a valid credential are limited per client address: public routes, and refused
// keys and tokens. Once an address has spent that budget even a valid key is not looked up
// from it (429), so that guessing keys costs the database nothing; other addresses and keys are
// untouched. Health probes are never limited.
func TestCallsWithoutAValidCredentialAreRateLimitedPerClientAddress(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withRateLimits(4))
	a := g.createCompany("Acme") // admin calls that succeed draw from no bucket
	if r := g.do(request{method: http.MethodGet, path: "/api/v1/openapi.json"}); r.status != http.StatusOK ||
		!strings.HasPrefix(r.header.Get("RateLimit"), `"anonymous";r=3;`) {
		t.Fatalf("public route: %d %q", r.status, r.header.Get("RateLimit"))
	}
	assertError(t, g.whoami(map[string]string{"x-api-key": "sk_test_nope"}), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, g.whoami(map[string]string{"x-api-key": a.Keys["pk_test"]}), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, g.admin(http.MethodGet, "/api/v1/admin/companies", "", "Authorization", "Bearer wrong"),
		http.StatusUnauthorized, "UNAUTHORIZED")
	r := g.whoami(map[string]string{"x-api-key": "sk_test_nope"})
	assertError(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
	assertError(t, g.whoami(map[string]string{"x-api-key": a.Keys["sk_test"]}), http.StatusTooManyRequests, "RATE_LIMITED")
	for range 10 {
		if r := g.do(request{method: http.MethodGet, path: "/healthz"}); r.status != http.StatusOK {
			t.Fatalf("/healthz limited: %d", r.status)
		}
	}
	// Another address (a trusted proxy's header, as configured) has its own budget.
	h := newGateway(t, withRateLimits(1), withConfig(func(c *service.Config) {
		c.RateLimits = service.RateLimitConfig{Anonymous: 0.001, AnonymousBurst: 1, ClientIPHeader: "X-Real-IP"}
	}))
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		r := h.do(request{method: http.MethodGet, path: "/api/v1/openapi.json", headers: map[string]string{"X-Real-IP": ip}})
		if r.status != http.StatusOK {
			t.Errorf("%s: %d", ip, r.status)
		}
	}
	assertError(t, h.do(request{method: http.MethodGet, path: "/api/v1/openapi.json",
		headers: map[string]string{"X-Real-IP": "192.0.2.1"}}), http.StatusTooManyRequests, "RATE_LIMITED")
}
