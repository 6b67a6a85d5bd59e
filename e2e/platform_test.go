package e2e_test

import (
	"net/http"
	"testing"
)

// The stack answers health checks on every component; an operator creates a company with the
// admin token; each key addresses its own company and environment; bad credentials are 401
// with the documented error body.
func TestOperatorCreatesACompanyAndKeysAddressIt(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.must(s.call(http.MethodGet, "/readyz", "", nil), http.StatusOK)
	for name, url := range s.creds.Health {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("%s readyz: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s readyz: %d", name, resp.StatusCode)
		}
	}
	b := s.newCompany("Beta Ltd")
	for kind, env := range map[string]string{"sk_test": "test", "sk_live": "live"} {
		r := s.must(s.call(http.MethodGet, "/api/v1/management/whoami", b.keys[kind], nil), http.StatusOK)
		if r.body["company_id"] != b.id || r.body["environment"] != env {
			t.Errorf("%s whoami: %s", kind, r)
		}
	}
	demo := s.must(s.call(http.MethodGet, "/api/v1/management/whoami", s.creds.Keys.SKTest, nil), http.StatusOK)
	if demo.body["company_id"] == b.id {
		t.Errorf("the demo company's key authenticates as the new company")
	}
	for _, bad := range []string{"", "sk_test_nope", "Bearer " + s.creds.AdminToken, b.keys["pk_test"]} {
		r := s.call(http.MethodGet, "/api/v1/management/whoami", bad, nil)
		if r.status != http.StatusUnauthorized || r.errorCode() != "UNAUTHORIZED" || r.header.Get("X-Request-Id") == "" {
			t.Errorf("whoami with %q: %s", bad, r)
		}
	}
	if r := s.call(http.MethodPost, "/api/v1/admin/companies", "Bearer wrong", map[string]any{"name": "X"}); r.status != http.StatusUnauthorized {
		t.Errorf("admin with a wrong token: %s", r)
	}
}
