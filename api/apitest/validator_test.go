package apitest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/payplat/platform/api/apitest"
)

// fakeGateway answers every request with status and body.
func fakeGateway(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// findings collects what the checking transport reports.
type findings struct {
	mu   sync.Mutex
	errs []string
}

func (f *findings) report(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err.Error())
}

func send(t *testing.T, base, method, path, body string, header ...string) *findings {
	t.Helper()
	v, err := apitest.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &findings{}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := v.Client(f.report).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return f
}

const merchant = `{"id":"3b9f2c44-0d7e-4a51-8c6b-9e2d1f0a7b35","name":"Corner Shop","email":"shop@example.com",` +
	`"wallet_address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed","balance":"12.50","created_at":"2026-11-25T12:01:02.113Z"}`

// What the document says passes; a field renamed in code without the document, a money value
// written as a number, an undocumented status, an error body of another shape, and a request
// the document refuses being accepted, each fail.
func TestCheckCatchesWhatTheDocumentDoesNotSay(t *testing.T) {
	t.Parallel()
	ok := send(t, fakeGateway(t, 200, `{"merchants":[`+merchant+`]}`), "GET", "/api/v1/management/merchants", "")
	if len(ok.errs) != 0 {
		t.Fatalf("a documented answer was reported: %v", ok.errs)
	}
	for _, tc := range []struct {
		name, body, method, path, reqBody string
		status                            int
		want                              string
	}{
		{"renamed field", `{"merchants":[` + strings.Replace(merchant, `"name"`, `"merchant_name"`, 1) + `]}`,
			"GET", "/api/v1/management/merchants", "", 200, "breaks the document"},
		{"number for money", `{"merchants":[` + strings.Replace(merchant, `"12.50"`, `12.5`, 1) + `]}`,
			"GET", "/api/v1/management/merchants", "", 200, "breaks the document"},
		{"undocumented status", `{"error":{"code":"NOT_FOUND","message":"x","request_id":"r"}}`,
			"GET", "/api/v1/management/merchants", "", 404, "breaks the document"},
		{"error of another shape", `{"code":"VALIDATION_ERROR"}`,
			"POST", "/api/v1/management/merchants/create", `{"name":"A","email":"a@example.com"}`, 400, "breaks the document"},
		{"unknown code", `{"error":{"code":"OOPS","message":"x","request_id":"r"}}`,
			"POST", "/api/v1/management/merchants/create", `{"name":"A","email":"a@example.com"}`, 400, "breaks the document"},
		{"refused request accepted", `{"merchant":{}}`,
			"POST", "/api/v1/management/merchants/create", `{"name":"A"}`, 201, "the document refuses the request"},
		{"undocumented route answered", `{}`, "GET", "/api/v1/management/nothing", "", 200, "no such operation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := send(t, fakeGateway(t, tc.status, tc.body), tc.method, tc.path, tc.reqBody, "Content-Type", "application/json")
			if len(f.errs) != 1 || !strings.Contains(f.errs[0], tc.want) {
				t.Fatalf("findings %q, want one containing %q", f.errs, tc.want)
			}
		})
	}
}

// An unknown route answered with the Error body is fine; the dashboard's pages are skipped.
func TestCheckAcceptsUnknownRoutesAnsweredWithAnErrorAndSkipsTheDashboard(t *testing.T) {
	t.Parallel()
	f := send(t, fakeGateway(t, 404, `{"error":{"code":"NOT_FOUND","message":"no such route","request_id":"r"}}`),
		"GET", "/api/v1/nothing", "")
	if len(f.errs) != 0 {
		t.Fatalf("%v", f.errs)
	}
	if f := send(t, fakeGateway(t, 200, `<html>`), "GET", "/dashboard/merchants", ""); len(f.errs) != 0 {
		t.Fatalf("%v", f.errs)
	}
}

// The document's operations and extensions are listed.
func TestOperationsAreListedWithTheirPublishableKeyExtension(t *testing.T) {
	t.Parallel()
	ops, err := apitest.Operations()
	if err != nil || len(ops) < 25 {
		t.Fatalf("%d operations, %v", len(ops), err)
	}
	if !apitest.Publishable("POST", "/api/v1/payments/process") || apitest.Publishable("GET", "/api/v1/management/merchants") {
		t.Error("x-publishable-key not read")
	}
}

// A delivery as the dispatcher sends it passes; one without its signature header, or with a
// data field the document does not have, fails.
func TestCheckWebhookRefusesAMissingSignatureOrAnUndocumentedField(t *testing.T) {
	t.Parallel()
	v, err := apitest.New()
	if err != nil {
		t.Fatal(err)
	}
	body := `{"event":"pool.low_balance","timestamp":"2026-11-25T12:00:00.000Z","data":{"company_id":"c1",` +
		`"balance":"-2.50","threshold":"100.00","currency":"USDC","timestamp":"2026-11-25T12:00:00.000Z"}}`
	delivery := func(body string, drop string) error {
		r := httptest.NewRequest("POST", "/hooks", strings.NewReader(body))
		for k, val := range map[string]string{"Content-Type": "application/json",
			"X-Webhook-Signature": strings.Repeat("ab", 32), "X-Webhook-Timestamp": "2026-11-25T12:00:01.000Z",
			"X-Webhook-Event": "pool.low_balance", "X-Webhook-Id": "3b9f2c44-0d7e-4a51-8c6b-9e2d1f0a7b35",
			"User-Agent": "Payplat-Webhook/1.0", "webhook-id": "3b9f2c44-0d7e-4a51-8c6b-9e2d1f0a7b35",
			"webhook-timestamp": "1764072001", "webhook-signature": "v1,abc="} {
			if k != drop {
				r.Header.Set(k, val)
			}
		}
		return v.CheckWebhook(r, []byte(body))
	}
	if err := delivery(body, ""); err != nil {
		t.Fatal(err)
	}
	if err := delivery(body, "X-Webhook-Signature"); err == nil {
		t.Error("a delivery without its signature passed")
	}
	if err := delivery(strings.Replace(body, `"threshold"`, `"limit"`, 1), ""); err == nil {
		t.Error("a renamed data field passed")
	}
}
