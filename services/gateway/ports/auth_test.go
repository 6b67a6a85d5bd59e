package ports_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/services/gateway/service"
)

const wellFormedUnknown = "sk_test_0123456789abcdefghijABCDEFGHIJ0123456789"

func TestEveryRefusedCredentialGets401WithTheSameMessage(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	acme := g.createCompany("Acme")
	revoked := acme.Keys["sk_live"]
	if r := g.admin(http.MethodPost, "/api/v1/admin/companies/"+acme.ID+"/keys/sk_live/roll", ""); r.status != http.StatusOK {
		t.Fatalf("roll: %d %s", r.status, r.body)
	}
	tests := []struct {
		name    string
		headers map[string]string
	}{
		{"no credentials", nil},
		{"empty x-api-key", map[string]string{"X-Api-Key": " "}},
		{"malformed sk_foo", map[string]string{"X-Api-Key": "sk_foo"}},
		{"bearer without token", map[string]string{"Authorization": "Bearer"}},
		{"bearer with blank token", map[string]string{"Authorization": "Bearer   "}},
		{"basic scheme", map[string]string{"Authorization": "Basic " + acme.Keys["sk_test"]}},
		{"wrong prefix", map[string]string{"X-Api-Key": "xk_test_" + strings.Repeat("a", 40)}},
		{"wrong environment", map[string]string{"X-Api-Key": "sk_prod_" + strings.Repeat("a", 40)}},
		{"too short", map[string]string{"X-Api-Key": "sk_test_abc"}},
		{"key with trailing garbage", map[string]string{"X-Api-Key": acme.Keys["sk_test"] + "!"}},
		{"unknown key", map[string]string{"X-Api-Key": wellFormedUnknown}},
		{"unknown key as bearer", map[string]string{"Authorization": "Bearer " + wellFormedUnknown}},
		{"revoked key", map[string]string{"X-Api-Key": revoked}},
		{"revoked key as bearer", map[string]string{"Authorization": "Bearer " + revoked}},
		{"admin token is not an api key", map[string]string{"Authorization": "Bearer " + g.adminToken}},
	}
	var message any
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := assertError(t, g.whoami(tt.headers), http.StatusUnauthorized, "UNAUTHORIZED")
			// One message for every case: the answer must not tell which check failed.
			if message == nil {
				message = e["message"]
			} else if e["message"] != message {
				t.Errorf("message %q differs from %q", e["message"], message)
			}
		})
	}
}

func TestAPIKeyIdentifiesCompanyAndEnvironment(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	a, b := g.createCompany("Company A"), g.createCompany("Company B")
	tests := []struct {
		company company
		keyType string
		env     string
	}{
		{a, "sk_test", "test"}, {a, "sk_live", "live"},
		{b, "sk_test", "test"}, {b, "sk_live", "live"},
	}
	for _, tt := range tests {
		for _, header := range []string{"X-Api-Key", "Authorization"} {
			t.Run(tt.company.Name+"/"+tt.keyType+"/"+header, func(t *testing.T) {
				t.Parallel()
				value := tt.company.Keys[tt.keyType]
				if header == "Authorization" {
					value = "Bearer " + value
				}
				r := g.whoami(map[string]string{header: value})
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				m := r.json(t)
				if m["company_id"] != tt.company.ID || m["environment"] != tt.env || m["key_kind"] != "secret" {
					t.Errorf("whoami = %v, want company %s environment %s", m, tt.company.ID, tt.env)
				}
				if r.header.Get("X-Request-Id") == "" {
					t.Error("no X-Request-Id")
				}
			})
		}
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	if r := g.whoami(map[string]string{"Authorization": "bearer " + c.Keys["sk_test"]}); r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
}

// A publishable key on a secret-only route is 401 UNAUTHORIZED: the specification's error table
// gives 401 for an "invalid or missing secret key" on management endpoints, and a publishable
// key is not a secret key. The message says which kind is needed; it is decided from the key's
// format alone, so it reveals nothing about whether the key exists.
func TestPublishableKeyRefusedOnSecretRoute(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	for _, kt := range []string{"pk_test", "pk_live"} {
		for _, key := range []string{c.Keys[kt], kt + "_" + strings.Repeat("Z", 40)} {
			e := assertError(t, g.whoami(map[string]string{"X-Api-Key": key}), http.StatusUnauthorized, "UNAUTHORIZED")
			if !strings.Contains(e["message"].(string), "kind of API key") {
				t.Errorf("message %q does not say the key kind is wrong", e["message"])
			}
		}
	}
}

func TestRolledKeyReplacesOldOne(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	r := g.admin(http.MethodPost, "/api/v1/admin/companies/"+c.ID+"/keys/sk_test/roll", "")
	if r.status != http.StatusOK {
		t.Fatalf("roll: %d %s", r.status, r.body)
	}
	key := r.json(t)["api_key"].(map[string]any)
	newKey := key["key"].(string)
	if !strings.HasPrefix(newKey, "sk_test_") || newKey == c.Keys["sk_test"] {
		t.Fatalf("new key %q", newKey)
	}
	if key["company_id"] != c.ID || key["kind"] != "secret" || key["environment"] != "test" ||
		!strings.HasPrefix(newKey, key["prefix"].(string)) {
		t.Errorf("key description %v", key)
	}
	assertError(t, g.whoami(map[string]string{"X-Api-Key": c.Keys["sk_test"]}), http.StatusUnauthorized, "UNAUTHORIZED")
	if r := g.whoami(map[string]string{"X-Api-Key": newKey}); r.status != http.StatusOK {
		t.Fatalf("new key: %d %s", r.status, r.body)
	}
	// The other keys of the company are untouched.
	if r := g.whoami(map[string]string{"X-Api-Key": c.Keys["sk_live"]}); r.status != http.StatusOK {
		t.Fatalf("sk_live after rolling sk_test: %d %s", r.status, r.body)
	}
}

// A key in use (so remembered by the gateway's key cache) is refused as soon as its roll has
// answered, even with a cache TTL far longer than the test.
func TestRolledKeyInUseRefusedAtOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withConfig(func(c *service.Config) { c.KeyCacheTTL = time.Hour }))
	c := g.createCompany("Acme")
	old := map[string]string{"X-Api-Key": c.Keys["sk_test"]}
	for range 3 {
		if r := g.whoami(old); r.status != http.StatusOK {
			t.Fatalf("before the roll: %d %s", r.status, r.body)
		}
	}
	if r := g.admin(http.MethodPost, "/api/v1/admin/companies/"+c.ID+"/keys/sk_test/roll", ""); r.status != http.StatusOK {
		t.Fatalf("roll: %d %s", r.status, r.body)
	}
	assertError(t, g.whoami(old), http.StatusUnauthorized, "UNAUTHORIZED")
	if r := g.whoami(map[string]string{"X-Api-Key": c.Keys["sk_live"]}); r.status != http.StatusOK {
		t.Fatalf("sk_live after rolling sk_test: %d %s", r.status, r.body)
	}
}

func TestRollKeyAnswers404ForAnUnknownCompanyAnd400ForABadKeyType(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	tests := []struct {
		name   string
		path   string
		status int
		code   string
		field  []string
	}{
		{"unknown company", "/api/v1/admin/companies/6f1c1d3e-8a86-4f4e-9d51-2f1f2b1c0a11/keys/sk_test/roll", 404, "NOT_FOUND", nil},
		{"not a uuid", "/api/v1/admin/companies/acme/keys/sk_test/roll", 404, "NOT_FOUND", nil},
		{"bad key type", "/api/v1/admin/companies/" + c.ID + "/keys/sk_prod/roll", 400, "VALIDATION_ERROR", []string{"kind_env"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertError(t, g.admin(http.MethodPost, tt.path, ""), tt.status, tt.code, tt.field...)
		})
	}
}

func TestConcurrentRollsLeaveOneActiveKey(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	const n = 5
	statuses := make(chan int, n)
	for range n {
		go func() {
			r, err := g.send(g.adminRequest(http.MethodPost, "/api/v1/admin/companies/"+c.ID+"/keys/pk_live/roll", ""))
			if err != nil {
				statuses <- 0
				return
			}
			statuses <- r.status
		}()
	}
	for range n {
		if s := <-statuses; s != http.StatusOK {
			t.Errorf("a roll answered %d", s)
		}
	}
	var active int
	err := g.db.QueryRow(t.Context(), `SELECT count(*) FROM api_keys
		WHERE company_id = $1 AND kind = 'publishable' AND environment = 'live' AND revoked_at IS NULL`,
		c.ID).Scan(&active)
	if err != nil || active != 1 {
		t.Fatalf("active pk_live keys = %d (%v), want 1", active, err)
	}
}
