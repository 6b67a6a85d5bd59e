package ports

import (
	"cmp"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// Native fuzz targets of every request decoder of the API (issue 17): JSON bodies and query
// strings. `go test` runs their seeds; `make fuzz` runs each for a while with -fuzz. A decoder
// may refuse anything, but only with a *validation.Error (a 400 naming what is wrong),
// never by panicking or with another error (a 500); what it accepts respects the documented
// bounds.

// bodySeeds are request bodies good and bad, shared by the body targets.
var bodySeeds = []string{
	`{"name":"Corner Shop","email":"shop@example.com"}`, `{"status":"PAUSED"}`, `{"status":"FROZEN","reason":"x"}`,
	`{"low_threshold":"100.00","auto_top_up_enabled":true}`, `{"amount":"12.50"}`,
	`{"merchant_id":"3b9f2c44-0d7e-4a51-8c6b-9e2d1f0a7b35","amount":"1","expires_in_seconds":900}`,
	`{"url":"https://hooks.example.com","enabled":true,"rollSecret":true}`, `{"name":"a\u0000b"}`, `{"name":"a","name":"b"}`,
	`{} {}`, `{"name":`, `null`, `[]`, `"x"`, ``, `{"amount":1e400}`, `{"expires_in_seconds":1.5}`, "\xff\xfe",
	`{"a":{"b":[{"c":"\u0000"}]}}`, `{"status":null}`, ` {"status":"ACTIVE"} `,
}

// checkDecoded fails unless err is nil or a validation error.
func checkDecoded(t *testing.T, body string, err error) {
	t.Helper()
	var v *validation.Error
	if err != nil && !errors.As(err, &v) {
		t.Fatalf("decoding %q: %T %v, want nil or a *validation.Error", body, err, err)
	}
}

func fuzzBody[T any](f *testing.F, check func(t *testing.T, v T)) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v T
		err := decodeJSONBody([]byte(body), &v)
		checkDecoded(t, body, err)
		if err == nil && check != nil {
			check(t, v)
		}
	})
}

func FuzzDecodeCreateCompany(f *testing.F)  { fuzzBody[createCompanyRequest](f, nil) }
func FuzzDecodeCreateMerchant(f *testing.F) { fuzzBody[merchantCreateRequest](f, nil) }
func FuzzDecodeMerchantStatus(f *testing.F) { fuzzBody[merchantStatusRequest](f, nil) }
func FuzzDecodePoolSettings(f *testing.F)   { fuzzBody[poolSettingsBody](f, nil) }
func FuzzDecodePoolDeposit(f *testing.F)    { fuzzBody[poolDepositBody](f, nil) }
func FuzzDecodeWebhookConfig(f *testing.F)  { fuzzBody[webhookConfigRequest](f, nil) }

// The payment body, then its validation: an accepted amount is positive with at most 6
// decimals, an accepted expiry within 60 s to 24 h.
func FuzzDecodePaymentRequest(f *testing.F) {
	fuzzBody(f, func(t *testing.T, body paymentRequestJSON) {
		if body.MerchantID == nil {
			return
		}
		req, err := domain.NewPaymentRequest(*body.MerchantID, body.Amount, body.ExpiresInSeconds)
		checkDecoded(t, "", err)
		if err != nil {
			return
		}
		a, perr := money.Parse(req.Amount)
		if perr != nil || !a.IsPositive() || req.ExpiresIn < domain.PaymentMinExpiry || req.ExpiresIn > domain.PaymentMaxExpiry {
			t.Fatalf("accepted %+v", req)
		}
	})
}

var querySeeds = []string{"", "limit=1", "limit=100", "limit=0", "limit=101", "limit=-1", "limit=abc", "limit=1&limit=2",
	"offset=0", "offset=-1", "offset=99999999999999999999", "type=DEPOSIT", "type=deposit", "status=PENDING",
	"status=", "event_type=payment.confirmed", "event_type=x", "%zz", "limit=%00", "sort=asc"}

// fuzzQuery fuzzes the query string of a GET of path: decode parses the request as its handler
// does and returns its error, or why what it accepted is out of the documented bounds.
func fuzzQuery(f *testing.F, path string, decode func(r *http.Request) error) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", path, nil)
		r.URL.RawQuery = q
		checkDecoded(t, q, decode(r))
	})
}

// pageBounds refuses a limit outside 1 to most or a negative offset, the bounds every list
// documents.
func pageBounds[N int | int64](limit, most int, offset N) error {
	if limit < 1 || limit > most || offset < 0 {
		return errors.New("accepted out-of-bounds pagination")
	}
	return nil
}

func FuzzPoolFilter(f *testing.F) {
	fuzzQuery(f, "/api/v1/management/pool/transactions", func(r *http.Request) error {
		filter, err := parsePoolFilter(r)
		return cmp.Or(err, pageBounds(filter.Limit, poolMaxLimit, filter.Offset))
	})
}

func FuzzPaymentFilter(f *testing.F) {
	fuzzQuery(f, "/api/v1/management/payments", func(r *http.Request) error {
		filter, err := paymentFilter(r)
		return cmp.Or(err, pageBounds(filter.Limit, maxPaymentsLimit, filter.Offset))
	})
}

func FuzzMerchantLedgerLimit(f *testing.F) {
	fuzzQuery(f, "/api/v1/management/merchants/x/transactions", func(r *http.Request) error {
		n, err := merchantLedgerLimit(r)
		return cmp.Or(err, pageBounds(n, maxMerchantLedgerLimit, 0))
	})
}

func FuzzWebhookLogFilter(f *testing.F) {
	fuzzQuery(f, "/api/v1/dashboard/webhooks/logs", func(r *http.Request) error {
		filter, err := webhookLogFilter(r)
		return cmp.Or(err, pageBounds(filter.Limit, maxWebhookLogLimit, 0))
	})
}
