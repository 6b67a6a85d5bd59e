package ports_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/ports"
)

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	big := `{"name":"` + strings.Repeat("x", ports.MaxBodyBytes) + `"}`
	tests := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"unknown route", request{method: http.MethodGet, path: "/api/v1/nope"}, 404, "NOT_FOUND"},
		{"root", request{method: http.MethodGet, path: "/"}, 404, "NOT_FOUND"},
		{"wrong method", g.adminRequest(http.MethodDelete, "/api/v1/admin/companies", ""), 405, "METHOD_NOT_ALLOWED"},
		{"wrong method on health", request{method: http.MethodPost, path: "/healthz"}, 405, "METHOD_NOT_ALLOWED"},
		{"malformed JSON", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `{"name":`), 400, "VALIDATION_ERROR"},
		{"not JSON", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `name=Acme`), 400, "VALIDATION_ERROR"},
		{"array", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `[{"name":"Acme"}]`), 400, "VALIDATION_ERROR"},
		{"trailing object", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `{"name":"Acme"}{"name":"Evil"}`), 400, "VALIDATION_ERROR"},
		{"trailing garbage", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `{"name":"Acme"} x`), 400, "VALIDATION_ERROR"},
		{"empty body", request{method: http.MethodPost, path: "/api/v1/admin/companies",
			headers: map[string]string{"Authorization": "Bearer " + g.adminToken}}, 400, "VALIDATION_ERROR"},
		{"form content type", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `{"name":"Acme"}`,
			"Content-Type", "application/x-www-form-urlencoded"), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"text content type", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `{"name":"Acme"}`,
			"Content-Type", "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"body over 1 MiB", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", big), 413, "PAYLOAD_TOO_LARGE"},
		{"body over 1 MiB with idempotency key", g.adminRequest(http.MethodPost, "/api/v1/admin/companies", big,
			"Idempotency-Key", uuid.NewString()), 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertError(t, g.do(tt.req), tt.status, tt.code)
		})
	}
	if n := len(g.admin(http.MethodGet, "/api/v1/admin/companies", "").json(t)["companies"].([]any)); n != 0 {
		t.Errorf("%d companies created by refused requests", n)
	}
}

// A body over the limit sent without a Content-Length (chunked) is caught while reading.
func TestChunkedBodyOverLimit(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	body := io.MultiReader(strings.NewReader(`{"name":"`), bytes.NewReader(bytes.Repeat([]byte("x"), ports.MaxBodyBytes)),
		strings.NewReader(`"}`))
	req := g.adminRequest(http.MethodPost, "/api/v1/admin/companies", "")
	req.body = io.NopCloser(body) // not a known-length reader: sent chunked
	assertError(t, g.do(req), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
}

// A form-encoded body (what `curl -d` sends without a Content-Type header) gets a 415 that says
// which header to send.
func TestUnsupportedMediaTypeSaysWhichHeaderToSend(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	r := g.do(g.adminRequest(http.MethodPost, "/api/v1/admin/companies", `{"name":"Acme"}`,
		"Content-Type", "application/x-www-form-urlencoded"))
	assertError(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	msg, _ := r.json(t)["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "Content-Type: application/json") || !strings.Contains(msg, "curl -d") {
		t.Fatalf("415 message %q does not say which header to send", msg)
	}
}

func TestJSONContentTypeVariantsAccepted(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "APPLICATION/JSON", ""} {
		r := g.admin(http.MethodPost, "/api/v1/admin/companies", `{"name":"Acme"}`, "Content-Type", ct)
		if r.status != http.StatusCreated {
			t.Errorf("Content-Type %q: %d %s", ct, r.status, r.body)
		}
	}
}

func TestPanicIsInternalErrorWithoutDetail(t *testing.T) {
	t.Parallel()
	const secret = "db password is hunter2"
	g := newGateway(t, withRoutes(func(s *ports.Server) {
		s.HandleFunc(http.MethodGet, "/test/panic", func(http.ResponseWriter, *http.Request) { panic(secret) }, ports.Public)
	}))
	r := g.do(request{method: http.MethodGet, path: "/test/panic"})
	assertError(t, r, http.StatusInternalServerError, "INTERNAL")
	if strings.Contains(string(r.body), "hunter2") {
		t.Fatalf("panic detail leaked: %s", r.body)
	}
	id := r.header.Get("X-Request-Id")
	var logged, requestLine bool
	for _, rec := range g.logs.Records(t) {
		if rec["request_id"] != id {
			continue
		}
		if rec["msg"] == "panic serving request" && strings.Contains(rec["panic"].(string), "hunter2") && rec["stack"] != "" {
			logged = true
		}
		if rec["msg"] == "http request" && rec["status"] == float64(500) && rec["route"] == "/test/panic" {
			requestLine = true
		}
	}
	if !logged || !requestLine {
		t.Errorf("panic logged with request id: %v, request line: %v", logged, requestLine)
	}
	// The server keeps serving.
	if r := g.do(request{method: http.MethodGet, path: "/healthz"}); r.status != http.StatusOK {
		t.Errorf("healthz after panic: %d", r.status)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"none", "", false},
		{"sane", "req-1.A_b", true},
		{"64 characters", strings.Repeat("a", 64), true},
		{"65 characters", strings.Repeat("a", 65), false},
		{"spaces", "a b", false},
		{"injection", "a\"}{", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/healthz", "/api/v1/management/whoami"} {
				r := g.do(request{method: http.MethodGet, path: path, headers: map[string]string{"X-Request-Id": tt.sent}})
				got := r.header.Get("X-Request-Id")
				if tt.kept && got != tt.sent {
					t.Errorf("%s: X-Request-Id = %q, want %q", path, got, tt.sent)
				}
				if !tt.kept {
					if _, err := uuid.Parse(got); err != nil {
						t.Errorf("%s: X-Request-Id = %q, want a fresh UUID", path, got)
					}
				}
			}
		})
	}
}

func TestRequestsAreLogged(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	r := g.whoami(map[string]string{"X-Api-Key": c.Keys["sk_test"], "X-Request-Id": "trace-42"})
	if r.status != http.StatusOK {
		t.Fatal(r.status)
	}
	for _, rec := range g.logs.Records(t) {
		if rec["request_id"] == "trace-42" && rec["msg"] == "http request" {
			if rec["method"] != "GET" || rec["route"] != "/api/v1/management/whoami" || rec["status"] != float64(200) ||
				rec["company_id"] != c.ID || rec["duration_ms"] == nil {
				t.Errorf("request log = %v", rec)
			}
			return
		}
	}
	t.Fatal("no request log line with the request id")
}
