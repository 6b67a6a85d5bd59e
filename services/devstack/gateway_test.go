package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// fakeAdminAPI is the gateway's admin API as the dev stack uses it: it creates companies and
// knows the keys it handed out.
type fakeAdminAPI struct {
	token   string
	created atomic.Int32
	known   map[string]bool
}

func (f *fakeAdminAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/admin/companies":
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var body struct{ Name string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		n := f.created.Add(1)
		sk := fmt.Sprintf("sk_test_%d", n)
		f.known[sk] = true
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"company":{"id":"c%d","name":%q,"created_at":"2026-01-01T00:00:00Z"},
			"keys":{"sk_test":%q,"sk_live":"sk_live_%d","pk_test":"pk_test_%d","pk_live":"pk_live_%d"}}`,
			n, body.Name, sk, n, n, n)
	case r.URL.Path == "/api/v1/management/whoami":
		key := r.Header.Get("Authorization")[len("Bearer "):]
		if !f.known[key] {
			w.WriteHeader(http.StatusUnauthorized)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestEnsureCompanyKeepsAKnownCompanyAndReplacesAForgottenOne(t *testing.T) {
	api := &fakeAdminAPI{token: "adm", known: map[string]bool{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	log := testLogger(io.Discard)
	admin := AdminClient{BaseURL: srv.URL, AdminToken: "adm", HTTP: srv.Client()}

	var creds Credentials
	if err := EnsureCompany(ctx, admin, &creds, "Demo Company", log); err != nil {
		t.Fatal(err)
	}
	if creds.Company == nil || creds.Company.ID != "c1" || creds.Company.Name != "Demo Company" ||
		creds.Keys == nil || *creds.Keys != (APIKeys{"sk_test_1", "sk_live_1", "pk_test_1", "pk_live_1"}) {
		t.Fatalf("credentials: %+v %+v", creds.Company, creds.Keys)
	}

	t.Run("kept while the gateway knows it", func(t *testing.T) {
		if err := EnsureCompany(ctx, admin, &creds, "Demo Company", log); err != nil {
			t.Fatal(err)
		}
		if api.created.Load() != 1 || creds.Company.ID != "c1" {
			t.Fatalf("company recreated: %d, %+v", api.created.Load(), creds.Company)
		}
	})
	t.Run("replaced when the gateway forgot it", func(t *testing.T) {
		delete(api.known, "sk_test_1") // a fresh database
		if err := EnsureCompany(ctx, admin, &creds, "Demo Company", log); err != nil {
			t.Fatal(err)
		}
		if creds.Company.ID != "c2" || creds.Keys.SKTest != "sk_test_2" {
			t.Fatalf("company not replaced: %+v", creds.Company)
		}
	})
	t.Run("wrong admin token", func(t *testing.T) {
		bad := admin
		bad.AdminToken = "nope"
		err := EnsureCompany(ctx, bad, &Credentials{}, "Demo Company", log)
		if err == nil {
			t.Fatal("created with a wrong admin token")
		}
	})
}
