package ports_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
	"github.com/payplat/platform/services/gateway/service"
)

const companies = "/api/v1/admin/companies"

func TestARepeatedIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	key := uuid.NewString()
	first := g.admin(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", key)
	if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
	}
	second := g.admin(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", key)
	if second.status != first.status || !bytes.Equal(second.body, first.body) {
		t.Fatalf("replay differs:\n%d %s\n%d %s", first.status, first.body, second.status, second.body)
	}
	if second.header.Get("Idempotent-Replayed") != "true" || second.header.Get("Content-Type") != first.header.Get("Content-Type") ||
		second.header.Get("Cache-Control") != "no-store" {
		t.Errorf("replay headers %v", second.header)
	}
	if second.header.Get("X-Request-Id") == first.header.Get("X-Request-Id") {
		t.Error("replay reuses the first request id")
	}
	if n := len(g.admin(http.MethodGet, companies, "").json(t)["companies"].([]any)); n != 1 {
		t.Errorf("%d companies, want 1", n)
	}
	// Another key is another request.
	if r := g.admin(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", uuid.NewString()); r.status != 201 ||
		bytes.Equal(r.body, first.body) {
		t.Errorf("new key: %d %s", r.status, r.body)
	}
}

func TestIdempotentResponseStoredSealed(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	key := "order-" + uuid.NewString()
	c := g.admin(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", key)
	var body, keyHash []byte
	if err := g.db.QueryRow(t.Context(), `SELECT response_body, key_hash FROM idempotency_keys`).Scan(&body, &keyHash); err != nil {
		t.Fatal(err)
	}
	sk := c.json(t)["keys"].(map[string]any)["sk_live"].(string)
	if bytes.Contains(body, []byte(sk)) || bytes.Contains(body, []byte("Acme")) || bytes.Contains(keyHash, []byte(key)) {
		t.Fatal("idempotency table holds the response or the key in clear")
	}
}

func TestAnIdempotencyKeyReusedForAnotherRequestIsRefusedAsAConflict(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	acme := g.createCompany("Acme")
	key := uuid.NewString()
	if r := g.admin(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", key); r.status != 201 {
		t.Fatal(r.status)
	}
	tests := []struct {
		name string
		req  request
	}{
		{"other body", g.adminRequest(http.MethodPost, companies, `{"name":"Other"}`, "Idempotency-Key", key)},
		{"same body, other whitespace", g.adminRequest(http.MethodPost, companies, `{"name": "Acme"}`, "Idempotency-Key", key)},
		{"other path", g.adminRequest(http.MethodPost, "/api/v1/admin/companies/"+acme.ID+"/keys/sk_test/roll", "",
			"Idempotency-Key", key)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertError(t, g.do(tt.req), http.StatusConflict, "IDEMPOTENCY_KEY_REUSED")
		})
	}
	if n := len(g.admin(http.MethodGet, companies, "").json(t)["companies"].([]any)); n != 2 {
		t.Errorf("%d companies, want 2", n)
	}
}

func TestConcurrentDuplicatesRunOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	key := uuid.NewString()
	const n = 10
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		responses []response
	)
	for range n {
		wg.Go(func() {
			r, err := g.send(g.adminRequest(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", key))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			responses = append(responses, r)
			mu.Unlock()
		})
	}
	wg.Wait()
	var created []byte
	for _, r := range responses {
		switch r.status {
		case http.StatusCreated:
			if created != nil && !bytes.Equal(created, r.body) {
				t.Errorf("two different 201 bodies:\n%s\n%s", created, r.body)
			}
			created = r.body
		case http.StatusConflict:
			assertError(t, r, http.StatusConflict, "IDEMPOTENCY_KEY_IN_PROGRESS")
		default:
			t.Errorf("status %d: %s", r.status, r.body)
		}
	}
	if created == nil {
		t.Error("no request succeeded")
	}
	if n := len(g.admin(http.MethodGet, companies, "").json(t)["companies"].([]any)); n != 1 {
		t.Fatalf("%d companies created, want exactly 1", n)
	}
}

// A 5xx response is not stored: retrying with the same key runs the request again.
func TestServerErrorIsNotStored(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	g := newGateway(t, withRoutes(func(s *ports.Server) {
		s.HandleFunc(http.MethodPost, "/api/v1/admin/flaky", func(w http.ResponseWriter, r *http.Request) error {
			switch calls.Add(1) {
			case 1:
				w.WriteHeader(http.StatusServiceUnavailable)
			case 2:
				panic("boom")
			default:
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"ok":true}`))
			}
			return nil
		}, ports.AdminToken)
	}))
	key := uuid.NewString()
	want := []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusCreated, http.StatusCreated}
	for i, status := range want {
		r := g.admin(http.MethodPost, "/api/v1/admin/flaky", `{}`, "Idempotency-Key", key)
		if r.status != status {
			t.Fatalf("attempt %d: %d, want %d", i+1, r.status, status)
		}
	}
	if calls.Load() != 3 {
		t.Errorf("handler ran %d times, want 3 (the 4th attempt is a replay)", calls.Load())
	}
}

// Keys are scoped by caller: the same key used by the admin, by two companies and by both
// environments of one company are five different keys.
func TestIdempotencyKeysScopedByCaller(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	g := newGateway(t, withRoutes(func(s *ports.Server) {
		s.HandleFunc(http.MethodPost, "/api/v1/management/echo", func(w http.ResponseWriter, r *http.Request) error {
			p, _ := ports.PrincipalFrom(r.Context())
			calls.Add(1)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(p.CompanyID.String() + "/" + string(p.Environment)))
			return nil
		}, ports.RequireKey(domain.Secret))
	}))
	a, b := g.createCompany("Company A"), g.createCompany("Company B")
	key := uuid.NewString()
	for _, sk := range []string{a.Keys["sk_test"], a.Keys["sk_live"], b.Keys["sk_test"], b.Keys["sk_test"]} {
		r := g.do(request{method: http.MethodPost, path: "/api/v1/management/echo", body: strings.NewReader(`{}`),
			headers: map[string]string{"X-Api-Key": sk, "Idempotency-Key": key}})
		if r.status != http.StatusCreated {
			t.Fatalf("%d %s", r.status, r.body)
		}
		whoami := g.whoami(map[string]string{"X-Api-Key": sk}).json(t)
		if string(r.body) != whoami["company_id"].(string)+"/"+whoami["environment"].(string) {
			t.Errorf("response %s belongs to another caller", r.body)
		}
	}
	if calls.Load() != 3 {
		t.Errorf("handler ran %d times, want 3 (B's sk_test repeat is a replay)", calls.Load())
	}
	if r := g.admin(http.MethodPost, companies, `{}`, "Idempotency-Key", key); r.status != http.StatusBadRequest {
		t.Errorf("admin with a key companies used: %d %s", r.status, r.body)
	}
}

func TestIdempotencyKeyMustBeASCIIAndAtMost255Characters(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	tests := []struct {
		name   string
		key    string
		status int
	}{
		{"255 characters", strings.Repeat("k", 255), http.StatusCreated},
		{"256 characters", strings.Repeat("k", 256), http.StatusBadRequest},
		{"non-ASCII", "clé", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := g.admin(http.MethodPost, companies, `{"name":"Acme"}`, "Idempotency-Key", tt.key)
			if tt.status == http.StatusBadRequest {
				assertError(t, r, tt.status, "VALIDATION_ERROR", "Idempotency-Key")
			} else if r.status != tt.status {
				t.Errorf("status %d: %s", r.status, r.body)
			}
		})
	}
}

// flakyIdempotency is the real repository with the database failing the first releases and stores of
// claims, as while PostgreSQL restarts.
type flakyIdempotency struct {
	ports.IdempotencyRepository
	failReleases, failCompletes atomic.Int32
}

func (f *flakyIdempotency) Release(ctx context.Context, scope, key string, owner uuid.UUID) error {
	if f.failReleases.Add(-1) >= 0 {
		return errors.New("releasing idempotency key: unexpected EOF")
	}
	return f.IdempotencyRepository.Release(ctx, scope, key, owner)
}

func (f *flakyIdempotency) Complete(ctx context.Context, scope, key string, owner uuid.UUID, resp domain.StoredResponse) error {
	if f.failCompletes.Add(-1) >= 0 {
		return errors.New("storing idempotent response: connection refused")
	}
	return f.IdempotencyRepository.Complete(ctx, scope, key, owner, resp)
}

// Defect found by the chaos check (PostgreSQL stopped mid-request): the release of a key after a
// 5xx failed, and every retry with the key got 409 IDEMPOTENCY_KEY_IN_PROGRESS until the lease
// ran out (5 minutes then); and a response whose storing failed could not be replayed. The
// gateway now settles the claim in the background as soon as the database answers again.
func TestKeyIsSettledOnceTheDatabaseIsBackDefectStuckKeyAfterFailedRelease(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	flaky := &flakyIdempotency{}
	flaky.failReleases.Store(3)
	flaky.failCompletes.Store(2)
	g := newGateway(t, withAPIOption(service.WithIdempotencyDecorator(func(s ports.IdempotencyRepository) ports.IdempotencyRepository {
		flaky.IdempotencyRepository = s
		return flaky
	})), withRoutes(func(s *ports.Server) {
		s.HandleFunc(http.MethodPost, "/api/v1/admin/flaky", func(w http.ResponseWriter, r *http.Request) error {
			if calls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return nil
			}
			w.WriteHeader(http.StatusCreated)
			_, _ = fmt.Fprintf(w, `{"call":%d}`, calls.Load())
			return nil
		}, ports.AdminToken)
	}))
	key := uuid.NewString()
	if r := g.admin(http.MethodPost, "/api/v1/admin/flaky", `{}`, "Idempotency-Key", key); r.status != http.StatusServiceUnavailable {
		t.Fatalf("first attempt: %d", r.status)
	}
	var done response
	testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		done = g.admin(http.MethodPost, "/api/v1/admin/flaky", `{}`, "Idempotency-Key", key)
		if done.status != http.StatusCreated {
			return fmt.Errorf("retry: %d %s", done.status, done.body)
		}
		return nil
	})
	// The response's storing failed twice: it is stored by a later try, then replayed.
	testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		r := g.admin(http.MethodPost, "/api/v1/admin/flaky", `{}`, "Idempotency-Key", key)
		if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.body, done.body) {
			return fmt.Errorf("replay: %d %s %v", r.status, r.body, r.header)
		}
		return nil
	})
	if calls.Load() != 2 {
		t.Fatalf("handler ran %d times, want 2", calls.Load())
	}
}
