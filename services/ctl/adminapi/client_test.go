package adminapi

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A POST that fails with 5xx is sent again with the same Idempotency-Key; a 4xx is not retried.
func TestAPostFailingWith5xxIsRetriedWithTheSameKeyAndA4xxIsNot(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		keys []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/v1/admin/companies/x/keys/sk_test/roll":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"NOT_FOUND","message":"resource not found","request_id":"r1"}}`))
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"company":{"id":"c1","name":"Acme"},"keys":{"sk_test":"sk_test_x"}}`))
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "token", nil)
	c.retryWait = 0
	got, err := c.CreateCompany(t.Context(), "Acme", "key-1")
	if err != nil || got.Company.Id != "c1" {
		t.Fatalf("CreateCompany = %+v, %v", got, err)
	}
	if len(keys) != 2 || keys[0] != "key-1" || keys[1] != "key-1" {
		t.Fatalf("Idempotency-Keys sent: %v", keys)
	}
	_, err = c.RollKey(t.Context(), "x", "sk_test", "key-2")
	apiErr, ok := err.(*Error)
	if !ok || apiErr.Code != "NOT_FOUND" || apiErr.Status != 404 || apiErr.RequestID != "r1" {
		t.Fatalf("RollKey error = %v", err)
	}
	if len(keys) != 3 {
		t.Errorf("a 404 was retried: %d calls", len(keys))
	}
}
