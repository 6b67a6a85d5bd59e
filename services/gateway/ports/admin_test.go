package ports_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/services/gateway/ports"
	"github.com/payplat/platform/services/gateway/service"
)

func TestAdminRoutesRefuseAnythingButTheAdminToken(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	tests := []struct {
		name    string
		headers map[string]string
	}{
		{"missing", map[string]string{"Authorization": ""}},
		{"wrong token", map[string]string{"Authorization": "Bearer " + g.adminToken + "x"}},
		{"prefix of token", map[string]string{"Authorization": "Bearer " + g.adminToken[:10]}},
		{"bearer without token", map[string]string{"Authorization": "Bearer"}},
		{"token without scheme", map[string]string{"Authorization": g.adminToken}},
		{"token in x-api-key", map[string]string{"Authorization": "", "X-Api-Key": g.adminToken}},
		{"company secret key", map[string]string{"Authorization": "Bearer " + c.Keys["sk_live"]}},
		{"cron secret", map[string]string{"Authorization": "Bearer " + g.cronSecret}},
	}
	for _, tt := range tests {
		for _, route := range []struct{ method, path, body string }{
			{http.MethodGet, "/api/v1/admin/companies", ""},
			{http.MethodPost, "/api/v1/admin/companies", `{"name":"Evil"}`},
			{http.MethodPost, "/api/v1/admin/companies/" + c.ID + "/keys/sk_test/roll", ""},
		} {
			t.Run(tt.name+"/"+route.method+route.path, func(t *testing.T) {
				t.Parallel()
				req := g.adminRequest(route.method, route.path, route.body)
				for k, v := range tt.headers {
					req.headers[k] = v
				}
				assertError(t, g.do(req), http.StatusUnauthorized, "UNAUTHORIZED")
			})
		}
	}
	// Nothing was created or rolled by the refused requests.
	if r := g.whoami(map[string]string{"X-Api-Key": c.Keys["sk_test"]}); r.status != http.StatusOK {
		t.Errorf("sk_test no longer works: %d", r.status)
	}
	if n := len(g.admin(http.MethodGet, "/api/v1/admin/companies", "").json(t)["companies"].([]any)); n != 1 {
		t.Errorf("%d companies, want 1", n)
	}
}

// With ADMIN_TOKEN or CRON_SECRET unset, their routes refuse everything: an empty configured
// secret must never match an empty (or any) presented one.
func TestUnsetSecretsLockTheirRoutes(t *testing.T) {
	t.Parallel()
	g := newGateway(t,
		withConfig(func(c *service.Config) { c.AdminToken, c.CronSecret = "", "" }),
		withRoutes(func(s *ports.Server) {
			s.HandleFunc(http.MethodGet, "/api/v1/cron/test", func(w http.ResponseWriter, r *http.Request) error { return nil }, ports.CronSecret)
		}))
	for _, path := range []string{"/api/v1/admin/companies", "/api/v1/cron/test"} {
		for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer x", "Bearer \"\""} {
			t.Run(path+"/"+auth, func(t *testing.T) {
				t.Parallel()
				r := g.do(request{method: http.MethodGet, path: path, headers: map[string]string{"Authorization": auth}})
				assertError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
			})
		}
	}
}

func TestCronRouteAcceptsOnlyTheCronSecret(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withRoutes(func(s *ports.Server) {
		s.HandleFunc(http.MethodGet, "/api/v1/cron/test", func(w http.ResponseWriter, r *http.Request) error {
			_, _ = w.Write([]byte(`{"ok":true}`))
			return nil
		}, ports.CronSecret)
	}))
	tests := []struct {
		auth   string
		status int
	}{
		{"Bearer " + g.cronSecret, http.StatusOK},
		{"Bearer " + g.adminToken, http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		r := g.do(request{method: http.MethodGet, path: "/api/v1/cron/test", headers: map[string]string{"Authorization": tt.auth}})
		if r.status != tt.status {
			t.Errorf("%q: status %d, want %d", tt.auth, r.status, tt.status)
		}
	}
}

func TestCreateCompanyReturnsTheCompanyAndFourKeysStoredByHash(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	before := time.Now().Add(-time.Second)
	r := g.admin(http.MethodPost, "/api/v1/admin/companies", `{"name":"  Acme Payments  "}`)
	if r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store on a response with keys", r.header.Get("Cache-Control"))
	}
	m := r.json(t)
	comp := m["company"].(map[string]any)
	if comp["name"] != "Acme Payments" || comp["id"] == "" || len(comp) != 3 {
		t.Errorf("company = %v", comp)
	}
	created, err := time.Parse(time.RFC3339Nano, comp["created_at"].(string))
	if err != nil || created.Before(before) || created.After(time.Now().Add(time.Second)) {
		t.Errorf("created_at = %v (%v)", comp["created_at"], err)
	}
	keys := m["keys"].(map[string]any)
	if len(keys) != 4 {
		t.Fatalf("keys = %v", keys)
	}
	for _, kt := range []string{"sk_test", "sk_live", "pk_test", "pk_live"} {
		k, _ := keys[kt].(string)
		random := strings.TrimPrefix(k, kt+"_")
		if random == k || len(random) < 32 || strings.Trim(random, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
			t.Errorf("%s = %q", kt, k)
		}
	}
	// Only the SHA-256 of the key is stored, with a short display prefix.
	var prefix string
	err = g.db.QueryRow(t.Context(), `SELECT display_prefix FROM api_keys
		WHERE key_hash = sha256(convert_to($1::text, 'UTF8'))`, keys["sk_test"]).Scan(&prefix)
	if err != nil || !strings.HasPrefix(keys["sk_test"].(string), prefix) || len(prefix) > len("sk_test_")+4 {
		t.Errorf("stored key: prefix %q, %v", prefix, err)
	}
}

func TestCreateCompanyRefusesInvalidNamesAndUnknownFields(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"missing name", `{}`, "name"},
		{"empty name", `{"name":""}`, "name"},
		{"one character", `{"name":"A"}`, "name"},
		{"one character after trimming", `{"name":"  A \t"}`, "name"},
		{"too long", `{"name":"` + strings.Repeat("x", 201) + `"}`, "name"},
		{"control character", `{"name":"Ac\u0000me"}`, "name"},
		{"name not a string", `{"name":42}`, "name"},
		{"unknown field", `{"name":"Acme","plan":"gold"}`, "plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := g.admin(http.MethodPost, "/api/v1/admin/companies", tt.body)
			assertError(t, r, http.StatusBadRequest, "VALIDATION_ERROR", tt.field)
		})
	}
	// Bounds are inclusive and count characters, not bytes.
	for _, name := range []string{"AB", strings.Repeat("é", 200)} {
		if r := g.admin(http.MethodPost, "/api/v1/admin/companies", `{"name":"`+name+`"}`); r.status != http.StatusCreated {
			t.Errorf("name of %d characters: %d %s", len([]rune(name)), r.status, r.body)
		}
	}
}

func TestListCompaniesNewestFirstWithoutKeys(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	empty := g.admin(http.MethodGet, "/api/v1/admin/companies", "")
	if string(empty.body) != "{\"companies\":[]}\n" {
		t.Errorf("empty list = %s", empty.body)
	}
	first, second := g.createCompany("First"), g.createCompany("Second")
	r := g.admin(http.MethodGet, "/api/v1/admin/companies", "")
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	list := r.json(t)["companies"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["id"] != second.ID || list[1].(map[string]any)["id"] != first.ID {
		t.Fatalf("list = %s", r.body)
	}
	for _, key := range first.Keys {
		if strings.Contains(string(r.body), key) {
			t.Fatal("list shows a key")
		}
	}
}
