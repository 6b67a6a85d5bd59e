package ports_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

func TestBadRequestsGetTheirStatusAndCodeAndCreateNothing(t *testing.T) {
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
func TestAChunkedBodyOverTheLimitIsRefusedAsTooLarge(t *testing.T) {
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
		s.HandleFunc(http.MethodGet, "/test/panic", func(http.ResponseWriter, *http.Request) error { panic(secret) }, ports.Public)
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

func TestRequestIDIsEchoedWhenSaneAndReplacedByAUUIDOtherwise(t *testing.T) {
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

// errorCase is an error a gateway endpoint returns, and what the API answers for it.
type errorCase struct {
	name    string
	err     error
	status  int
	code    string
	message string
	field   string
	// logged is the message a 5xx is logged with, at level; "" when the writer logs nothing.
	logged, level string
	// retryAfter is the Retry-After header the answer carries ("" for none).
	retryAfter string
}

const internalMessage = "internal error; quote the request id when reporting it"

// errorCases covers every row of the error table, each area's errors first, as the API answers
// them today (DESIGN §5). The expected answers are spelled out, not read from the table.
func errorCases() []errorCase {
	return []errorCase{
		// Merchant endpoints.
		{name: "duplicate merchant email", err: domain.ErrDuplicateResource, status: 400, code: "DUPLICATE_RESOURCE",
			message: "a merchant with this email already exists", field: "email"},
		{name: "merchant status locked", err: domain.ErrMerchantStatusLocked, status: 403, code: "MERCHANT_STATUS_LOCKED",
			message: "the merchant is FROZEN, BLACKLISTED or SUSPENDED; only the platform can change its status"},
		{name: "wallet provider unavailable", err: domain.ErrWalletProviderUnavailable, status: 503,
			code: "WALLET_PROVIDER_UNAVAILABLE", message: "the wallet provider is unavailable; nothing was created, retry later",
			logged: "merchant request failed", level: "WARN"},
		{name: "merchant service unavailable", err: fmt.Errorf("%w: %s", domain.ErrMerchantServiceUnavailable, "no responders"),
			status: 503, code: "SERVICE_UNAVAILABLE", message: "the merchant service is unavailable; retry later",
			logged: "merchant request failed", level: "WARN"},
		// Pool endpoints.
		{name: "pool operation with a live key", err: domain.ErrPoolTestModeOnly, status: 403, code: "TEST_MODE_ONLY",
			message: "this operation is only available with test keys"},
		{name: "pool service unavailable", err: fmt.Errorf("pool command %s: %w: %s", "pool.deposit",
			domain.ErrPoolServiceUnavailable, "timeout"), status: 503, code: "SERVICE_UNAVAILABLE",
			logged: "pool request failed", level: "WARN",
			message: "the pool service is unavailable; retry later with the same Idempotency-Key"},
		// Payment endpoints.
		{name: "merchant not active", err: domain.ErrMerchantNotActive, status: 403, code: "MERCHANT_NOT_ACTIVE",
			message: "the merchant is not ACTIVE and cannot receive payments"},
		{name: "payment simulation with a live key", err: domain.ErrPaymentTestModeOnly, status: 403, code: "TEST_MODE_ONLY",
			message: "payment simulation is only available with test keys"},
		{name: "payments unavailable", err: fmt.Errorf("%w: payment %s published but not yet visible",
			domain.ErrPaymentsUnavailable, "p1"), status: 503, code: "SERVICE_UNAVAILABLE",
			logged: "payment request failed", level: "WARN",
			message: "the payment could not be confirmed in time; retry with the same Idempotency-Key"},
		// Webhook endpoints.
		{name: "manual webhook retries over their rate", err: &domain.WebhookRetryLimitedError{RetryAfter: 7}, status: 429,
			code: "RATE_LIMITED", message: "too many manual webhook retries for this company: retry after 7 s", retryAfter: "7"},
		{name: "webhook attempt in flight", err: domain.ErrWebhookInFlight, status: 409, code: "WEBHOOK_IN_FLIGHT",
			message: "an attempt of this webhook delivery is in flight; retry shortly"},
		{name: "webhook service unavailable", err: fmt.Errorf("%w: %s", domain.ErrWebhooksUnavailable, "dispatcher down"),
			status: 503, code: "SERVICE_UNAVAILABLE", message: "the webhook service is unavailable; retry later",
			logged: "webhook request failed", level: "WARN"},
		// Every endpoint.
		{name: "rate limited", err: ports.RateLimited("3"), status: 429, code: "RATE_LIMITED",
			message: "too many requests: retry after 3 s"},
		{name: "invalid field", err: validation.Invalid("amount", "is required"), status: 400, code: "VALIDATION_ERROR",
			message: "is required", field: "amount"},
		{name: "invalid request", err: validation.Invalid("", "give low_threshold, auto_top_up_enabled or both"), status: 400,
			code: "VALIDATION_ERROR", message: "give low_threshold, auto_top_up_enabled or both"},
		{name: "body too large", err: &http.MaxBytesError{Limit: ports.MaxBodyBytes}, status: 413, code: "PAYLOAD_TOO_LARGE",
			message: "request body exceeds 1 MiB"},
		{name: "unauthorized", err: domain.ErrUnauthorized, status: 401, code: "UNAUTHORIZED",
			message: "invalid or missing credentials"},
		{name: "wrong kind of key", err: domain.ErrWrongKeyKind, status: 401, code: "UNAUTHORIZED",
			message: "this endpoint does not accept this kind of API key"},
		{name: "forbidden", err: domain.ErrForbidden, status: 403, code: "FORBIDDEN", message: "forbidden"},
		{name: "not found", err: fmt.Errorf("merchant m1: %w", domain.ErrNotFound), status: 404, code: "NOT_FOUND",
			message: "resource not found"},
		{name: "no such route", err: ports.ErrRouteNotFound, status: 404, code: "NOT_FOUND", message: "no such route"},
		{name: "method not allowed", err: ports.ErrMethodNotAllowed, status: 405, code: "METHOD_NOT_ALLOWED",
			message: "method not allowed on this route"},
		{name: "body not JSON", err: ports.ErrUnsupportedMediaType, status: 415, code: "UNSUPPORTED_MEDIA_TYPE",
			message: ports.ErrUnsupportedMediaType.Error()},
		{name: "idempotency key reused", err: ports.ErrIdempotencyKeyReused, status: 409, code: "IDEMPOTENCY_KEY_REUSED",
			message: "this Idempotency-Key was already used with a different request"},
		{name: "idempotency key in progress", err: ports.ErrIdempotencyKeyInProgress, status: 409,
			code: "IDEMPOTENCY_KEY_IN_PROGRESS", message: "a request with this Idempotency-Key is still being processed"},
		{name: "database unavailable", err: fmt.Errorf("listing merchants: %w", &pgconn.PgError{Code: "57P01"}),
			status: 503, code: "SERVICE_UNAVAILABLE", logged: "request failed", level: "ERROR",
			message: "the database is unavailable; retry later with the same Idempotency-Key"},
		{name: "panic", err: ports.ErrPanic, status: 500, code: "INTERNAL", message: internalMessage},
	}
}

// unknownErrorCase is an error no row of the table knows: its text must not reach the client.
func unknownErrorCase() errorCase {
	return errorCase{name: "unknown", err: fmt.Errorf("scanning row: %w", errors.New("db password is hunter2")),
		status: 500, code: "INTERNAL", message: internalMessage, logged: "request failed", level: "ERROR"}
}

func TestEveryDomainErrorHasOneStatusAndCode(t *testing.T) {
	t.Parallel()
	covered := map[int]bool{}
	for _, c := range errorCases() {
		status, code, message, field := ports.ErrorResponse(c.err)
		if status != c.status || code != c.code || message != c.message || field != c.field {
			t.Errorf("%s: ErrorResponse = %d %s %q field %q, want %d %s %q field %q", c.name, status, code, message, field,
				c.status, c.code, c.message, c.field)
		}
		row := ports.ErrorTableRow(c.err)
		if row < 0 {
			t.Errorf("%s: no row of the error table answers it", c.name)
		}
		covered[row] = true
	}
	for row := range ports.ErrorTableRows() {
		if !covered[row] {
			t.Errorf("row %d of the error table has no case here", row)
		}
	}
}

// Each area's unavailable dependency answers 503 SERVICE_UNAVAILABLE with its own message: the
// pool's, the payments' and the database's tell the client to retry with the same
// Idempotency-Key, the merchant service's and the webhook service's only to retry later.
func TestEachUnavailableServiceHasItsOwnMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err     error
		message string
	}{
		{domain.ErrMerchantServiceUnavailable, "the merchant service is unavailable; retry later"},
		{domain.ErrPoolServiceUnavailable, "the pool service is unavailable; retry later with the same Idempotency-Key"},
		{domain.ErrPaymentsUnavailable, "the payment could not be confirmed in time; retry with the same Idempotency-Key"},
		{domain.ErrWebhooksUnavailable, "the webhook service is unavailable; retry later"},
		{&pgconn.PgError{Code: "08006"}, "the database is unavailable; retry later with the same Idempotency-Key"},
	}
	for _, tt := range tests {
		status, code, message, field := ports.ErrorResponse(tt.err)
		if status != http.StatusServiceUnavailable || code != "SERVICE_UNAVAILABLE" || message != tt.message || field != "" {
			t.Errorf("%v: %d %s %q field %q, want 503 SERVICE_UNAVAILABLE %q", tt.err, status, code, message, field,
				tt.message)
		}
	}
	// The wallet provider, behind the merchant service, has a code of its own.
	if status, code, _, _ := ports.ErrorResponse(domain.ErrWalletProviderUnavailable); status != 503 ||
		code != "WALLET_PROVIDER_UNAVAILABLE" {
		t.Errorf("wallet provider unavailable: %d %s", status, code)
	}
}

func TestUnknownErrorIsInternalWithAGenericMessage(t *testing.T) {
	t.Parallel()
	for _, err := range []error{errors.New("db password is hunter2"), unknownErrorCase().err, context.Canceled} {
		status, code, message, field := ports.ErrorResponse(err)
		if status != http.StatusInternalServerError || code != "INTERNAL" || message != internalMessage || field != "" {
			t.Errorf("%v: %d %s %q field %q, want 500 INTERNAL %q", err, status, code, message, field, internalMessage)
		}
		if ports.ErrorTableRow(err) != -1 {
			t.Errorf("%v: row %d of the error table answers it", err, ports.ErrorTableRow(err))
		}
	}
}

// The one error writer answers every error as the table says, in the shape of DESIGN §5, with
// the request id; it logs a 5xx (at WARN for an area's unavailable dependency, at ERROR for any
// other but a panic, which recoverPanics logs) and never logs a 4xx.
func TestTheErrorWriterAnswersAndLogsEveryErrorAsTheTableSays(t *testing.T) {
	t.Parallel()
	cases := append(errorCases(), unknownErrorCase())
	g := newGateway(t, withRoutes(func(s *ports.Server) {
		s.HandleFunc(http.MethodGet, "/test/errors/{case}", func(w http.ResponseWriter, r *http.Request) error {
			n, _ := strconv.Atoi(mux.Vars(r)["case"])
			return cases[n].err
		}, ports.Public)
	}))
	for n, c := range cases {
		id := fmt.Sprintf("error-case-%d", n)
		r := g.do(request{method: http.MethodGet, path: fmt.Sprintf("/test/errors/%d", n),
			headers: map[string]string{"X-Request-Id": id}})
		want := map[string]any{"code": c.code, "message": c.message, "request_id": id}
		if c.field != "" {
			want["field"] = c.field
		}
		if got := r.json(t); r.status != c.status || !reflect.DeepEqual(got, map[string]any{"error": want}) {
			t.Errorf("%s: %d %s, want %d %v", c.name, r.status, r.body, c.status, want)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		if got := r.header.Get("Retry-After"); got != c.retryAfter {
			t.Errorf("%s: Retry-After %q, want %q", c.name, got, c.retryAfter)
		}
		if strings.Contains(string(r.body), "hunter2") {
			t.Errorf("%s: the cause reached the client: %s", c.name, r.body)
		}
		var logged []string
		for _, rec := range g.logs.Records(t) {
			if rec["request_id"] == id && rec["msg"] != "http request" {
				logged = append(logged, fmt.Sprint(rec["level"], " ", rec["msg"], ": ", rec["error"]))
			}
		}
		var wantLogged []string
		if c.logged != "" {
			wantLogged = []string{c.level + " " + c.logged + ": " + c.err.Error()}
		}
		if !slices.Equal(logged, wantLogged) {
			t.Errorf("%s: logged %q, want %q", c.name, logged, wantLogged)
		}
	}
}
