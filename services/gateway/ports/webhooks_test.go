package ports_test

import (
	"crypto/x509"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/gateway/migrations"
	whmigrations "github.com/payplat/platform/services/webhook-dispatcher/migrations"
	whservice "github.com/payplat/platform/services/webhook-dispatcher/service"
)

// webhookStack is the real gateway (service.New on a loopback port) and the real
// webhook-dispatcher (svctest) on one database and one JetStream server, with an HTTPS receiver
// the dispatcher trusts.
type webhookStack struct {
	stack
	receiver *httptest.Server
	status   atomic.Int64 // what the receiver answers
	hits     atomic.Int64
}

func newWebhookStack(t *testing.T) *webhookStack {
	t.Helper()
	// The receiver is an httptest server on loopback and a random port.
	return newWebhookStackWith(t, map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
		"WEBHOOK_ALLOW_ANY_PORT": "true"})
}

// newWebhookStackWith is newWebhookStack with the dispatcher's variables env added.
func newWebhookStackWith(t *testing.T, env map[string]string) *webhookStack {
	t.Helper()
	st := &webhookStack{}
	st.status.Store(http.StatusOK)
	st.receiver = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		st.hits.Add(1)
		w.WriteHeader(int(st.status.Load()))
	}))
	t.Cleanup(st.receiver.Close)
	pool := x509.NewCertPool()
	pool.AddCert(st.receiver.Certificate())

	dsn := testkit.NewDatabase(t, migrations.Set(),
		migrate.Set{Schema: whmigrations.Schema, Sources: whservice.Options(whservice.Config{}).Migrations})
	natsURL := testkit.NATS(t)
	vars := map[string]string{"WEBHOOK_SECRET_KEY": hex.EncodeToString(make([]byte, 32)),
		"WEBHOOK_RETRY_SCHEDULE": "1ms", "WEBHOOK_TIMEOUT": "2s"}
	maps.Copy(vars, env)
	whcfg, err := whservice.LoadConfigFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	svctest.StartOn(t, whservice.Options(whcfg.WithRootCAs(pool)), dsn, natsURL)

	st.stack = runGateway(t, dsn, natsURL)
	return st
}

func webhookPaymentCreated(companyID, env string) proto.Message {
	id := uuid.NewString()
	return &paymentv1.PaymentCreated{Meta: factMeta(companyID, env), PaymentId: id, MerchantId: "m_1", MerchantWallet: "0xmerchant",
		Amount: "10.00", Status: "PENDING", ExpiresAt: "2026-11-23T12:00:00Z", CreatedAt: "2026-11-23T11:45:00Z"}
}

func webhookPaymentExpired(companyID, env string) proto.Message {
	return &paymentv1.PaymentExpired{Meta: factMeta(companyID, env), PaymentId: uuid.NewString(), MerchantId: "m_1", Amount: "10.00",
		Status: "EXPIRED", ExpiredAt: "2026-11-23T12:00:00Z"}
}

type webhookLogs struct {
	Logs []map[string]any `json:"logs"`
}

func (st *webhookStack) logs(key, query string) []map[string]any {
	st.t.Helper()
	return decodeJSON[webhookLogs](st.t, st.call(key, http.MethodGet, "/api/v1/dashboard/webhooks/logs"+query, ""),
		http.StatusOK).Logs
}

func (st *webhookStack) waitLogs(key, query string, n int) []map[string]any {
	st.t.Helper()
	var logs []map[string]any
	testkit.WaitFor(st.t, 30*time.Second, 20*time.Millisecond, func() error {
		logs = st.logs(key, query)
		if len(logs) != n {
			return errors.New("log entries not there yet")
		}
		for _, l := range logs {
			if l["attempts"].(float64) < 1 {
				return errors.New("first attempt not recorded yet")
			}
		}
		return nil
	})
	return logs
}

func TestWebhookConfigShowsASecretOnlyWhenMadeOrRolledAndRefusesBadInput(t *testing.T) {
	st := newWebhookStack(t)
	c := st.createCompany("Hooks Ltd")
	sk := c.Keys["sk_test"]
	path := "/api/v1/dashboard/webhooks/config"
	assertError(t, st.call("", http.MethodPost, path, `{"rollSecret":true}`), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, st.call(c.Keys["pk_test"], http.MethodPost, path, `{"rollSecret":true}`), http.StatusUnauthorized, "UNAUTHORIZED")
	// A first configuration needs a URL: no endpoint (and no secret) for nowhere.
	for _, body := range []string{`{"enabled":false}`, `{"rollSecret":true}`, `{}`, `{"url":""}`} {
		assertError(t, st.call(sk, http.MethodPost, path, body), http.StatusBadRequest, "VALIDATION_ERROR", "url")
	}

	r := st.call(sk, http.MethodPost, path, `{"url":`+quote(st.receiver.URL+"/hooks")+`}`)
	if r.status != http.StatusOK {
		t.Fatalf("config: %d %s", r.status, r.body)
	}
	first := r.json(t)
	if s, _ := first["secret"].(string); !strings.HasPrefix(s, "whsec_") || first["enabled"] != true ||
		first["url"] != st.receiver.URL+"/hooks" {
		t.Fatalf("first config %s", r.body)
	}
	again := st.call(sk, http.MethodPost, path, `{"enabled":true}`).json(t)
	if _, shown := again["secret"]; shown {
		t.Fatalf("the secret was shown again: %v", again)
	}
	rolled := st.call(sk, http.MethodPost, path, `{"rollSecret":true}`).json(t)
	if s, _ := rolled["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == first["secret"] {
		t.Fatalf("roll %v", rolled)
	}
	assertError(t, st.call(sk, http.MethodPost, path, `{"url":"ftp://example.com"}`), http.StatusBadRequest,
		"VALIDATION_ERROR", "url")
	assertError(t, st.call(sk, http.MethodPost, path, `{"rollSecret":"yes"}`), http.StatusBadRequest,
		"VALIDATION_ERROR", "rollSecret")
	assertError(t, st.call(sk, http.MethodPost, path, `{"secret":"mine"}`), http.StatusBadRequest,
		"VALIDATION_ERROR", "secret")
}

// Without WEBHOOK_ALLOW_ANY_PORT (production), a webhook URL on a port other than 443 and 8443
// is a 400 VALIDATION_ERROR naming the field, and the endpoint is left as it was.
func TestWebhookConfigRefusesOtherPorts(t *testing.T) {
	st := newWebhookStackWith(t, nil)
	c := st.createCompany("Ports Ltd")
	sk := c.Keys["sk_test"]
	path := "/api/v1/dashboard/webhooks/config"
	for _, u := range []string{"https://hooks.example.com:8080/in", "https://hooks.example.com:22/",
		"https://hooks.example.com:0/", "https://93.184.216.34:5432/"} {
		e := assertError(t, st.call(sk, http.MethodPost, path, `{"url":`+quote(u)+`}`), http.StatusBadRequest,
			"VALIDATION_ERROR", "url")
		if msg, _ := e["message"].(string); !strings.Contains(msg, "443 or 8443") {
			t.Errorf("%s: message %q does not say which ports are allowed", u, msg)
		}
	}
	for _, u := range []string{"https://hooks.example.com/in", "https://hooks.example.com:8443/in"} {
		r := st.call(sk, http.MethodPost, path, `{"url":`+quote(u)+`}`)
		if r.status != http.StatusOK || r.json(t)["url"] != u {
			t.Fatalf("%s: %d %s", u, r.status, r.body)
		}
	}
}

// Manual retries are limited per company and environment (the dispatcher's token bucket):
// past the burst a retry is 429 RATE_LIMITED with Retry-After and nothing is sent; the refusal
// is not stored under its Idempotency-Key (a repeat is refused afresh, not replayed); another
// company's retries are unaffected.
func TestManualWebhookRetriesPastTheBurstAre429PerCompanyAndSendNothing(t *testing.T) {
	st := newWebhookStackWith(t, map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
		"WEBHOOK_ALLOW_ANY_PORT": "true", "WEBHOOK_MANUAL_RETRY_RATE": "0.01", "WEBHOOK_MANUAL_RETRY_BURST": "2"})
	busy, calm := st.createCompany("Busy Ltd"), st.createCompany("Calm Ltd")
	retryPath := map[string]string{}
	for _, c := range []company{busy, calm} {
		sk := c.Keys["sk_test"]
		if r := st.call(sk, http.MethodPost, "/api/v1/dashboard/webhooks/config", `{"url":`+quote(st.receiver.URL)+`}`); r.status != http.StatusOK {
			t.Fatalf("config: %d %s", r.status, r.body)
		}
		st.publish(webhookPaymentCreated(c.ID, "test"))
		retryPath[c.ID] = "/api/v1/dashboard/webhooks/" + st.waitLogs(sk, "", 1)[0]["id"].(string) + "/retry"
	}
	sk := busy.Keys["sk_test"]
	for i := range 2 {
		if r := st.call(sk, http.MethodPost, retryPath[busy.ID], ""); r.status != http.StatusOK {
			t.Fatalf("retry %d within the burst: %d %s", i+1, r.status, r.body)
		}
	}
	hits := st.hits.Load()
	retry := func() response {
		return st.do(request{method: http.MethodPost, path: retryPath[busy.ID],
			headers: map[string]string{"x-api-key": sk, "Idempotency-Key": "retry-once-more"}})
	}
	for _, r := range []response{retry(), retry()} {
		assertError(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
		if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 || n > 100 {
			t.Fatalf("Retry-After %q, want 1 to 100 s", r.header.Get("Retry-After"))
		}
		if r.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("the refusal was stored and replayed under its Idempotency-Key")
		}
	}
	if st.hits.Load() != hits {
		t.Fatalf("a refused retry reached the receiver")
	}
	if r := st.call(calm.Keys["sk_test"], http.MethodPost, retryPath[calm.ID], ""); r.status != http.StatusOK {
		t.Fatalf("another company's retry: %d %s", r.status, r.body)
	}
}

func TestWebhookLogsFiltersManualRetryAndCron(t *testing.T) {
	st := newWebhookStack(t)
	c := st.createCompany("Hooks Ltd")
	other := st.createCompany("Other Ltd")
	sk := c.Keys["sk_test"]
	if r := st.call(sk, http.MethodPost, "/api/v1/dashboard/webhooks/config",
		`{"url":`+quote(st.receiver.URL)+`}`); r.status != http.StatusOK {
		t.Fatalf("config: %d %s", r.status, r.body)
	}

	st.status.Store(http.StatusInternalServerError)
	st.publish(webhookPaymentCreated(c.ID, "test"))
	failed := st.waitLogs(sk, "", 1)[0]
	st.status.Store(http.StatusOK)
	st.publish(webhookPaymentExpired(c.ID, "test"))
	st.publish(webhookPaymentExpired(c.ID, "live")) // the live environment has no endpoint
	logs := st.waitLogs(sk, "", 2)
	if logs[0]["event_type"] != "payment.expired" || logs[1]["id"] != failed["id"] {
		t.Fatalf("not newest first: %v", logs)
	}
	for _, field := range []string{"id", "event_type", "status", "attempts", "last_attempt_at", "next_retry_at",
		"response_status", "response_body", "error_message"} {
		if _, ok := failed[field]; !ok {
			t.Fatalf("entry without %s: %v", field, failed)
		}
	}
	if failed["status"] != "FAILED" || failed["response_status"] != float64(500) || failed["next_retry_at"] == nil ||
		failed["error_message"] == nil || logs[0]["status"] != "SUCCESS" || logs[0]["error_message"] != nil {
		t.Fatalf("entries %v", logs)
	}
	for query, want := range map[string]int{"?status=FAILED": 1, "?status=SUCCESS": 1, "?status=PENDING": 0,
		"?event_type=payment.created": 1, "?event_type=payment.confirmed": 0, "?limit=1": 1, "?limit=100": 2} {
		if got := st.logs(sk, query); len(got) != want {
			t.Errorf("logs%s: %d entries, want %d", query, len(got), want)
		}
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?limit=abc", "?status=DONE", "?event_type=pool.debited"} {
		assertError(t, st.call(sk, http.MethodGet, "/api/v1/dashboard/webhooks/logs"+q, ""), http.StatusBadRequest,
			"VALIDATION_ERROR", strings.SplitN(strings.TrimPrefix(q, "?"), "=", 2)[0])
	}
	if got := st.logs(c.Keys["sk_live"], ""); len(got) != 0 {
		t.Fatalf("live key sees %d test entries", len(got))
	}
	if got := st.logs(other.Keys["sk_test"], ""); len(got) != 0 {
		t.Fatalf("another company sees %d entries", len(got))
	}

	// Manual retry: 404 for another company's or environment's id and for a malformed one.
	retry := "/api/v1/dashboard/webhooks/" + failed["id"].(string) + "/retry"
	assertError(t, st.call(other.Keys["sk_test"], http.MethodPost, retry, ""), http.StatusNotFound, "NOT_FOUND")
	assertError(t, st.call(c.Keys["sk_live"], http.MethodPost, retry, ""), http.StatusNotFound, "NOT_FOUND")
	assertError(t, st.call(sk, http.MethodPost, "/api/v1/dashboard/webhooks/nope/retry", ""), http.StatusNotFound, "NOT_FOUND")
	assertError(t, st.call(sk, http.MethodPost, "/api/v1/dashboard/webhooks/"+uuid.NewString()+"/retry", ""),
		http.StatusNotFound, "NOT_FOUND")
	hits := st.hits.Load()
	r := st.call(sk, http.MethodPost, retry, "")
	if r.status != http.StatusOK {
		t.Fatalf("manual retry: %d %s", r.status, r.body)
	}
	entry := r.json(t)
	if entry["id"] != failed["id"] || entry["status"] != "SUCCESS" || entry["attempts"] != float64(2) ||
		entry["next_retry_at"] != nil || st.hits.Load() != hits+1 {
		t.Fatalf("manual retry entry %s", r.body)
	}

	// Cron: 401 without the secret; processes what is due.
	cron := "/api/v1/cron/webhooks/retry"
	assertError(t, st.do(request{method: http.MethodGet, path: cron}), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, st.do(request{method: http.MethodGet, path: cron, headers: map[string]string{
		"Authorization": "Bearer wrong"}}), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, st.call(sk, http.MethodGet, cron, ""), http.StatusUnauthorized, "UNAUTHORIZED")
	st.status.Store(http.StatusBadGateway)
	st.publish(webhookPaymentCreated(c.ID, "test"))
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if len(st.logs(sk, "?status=FAILED")) != 1 {
			return errors.New("no failed delivery yet")
		}
		return nil
	})
	st.status.Store(http.StatusOK)
	var res map[string]any
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		r := st.do(request{method: http.MethodGet, path: cron, headers: map[string]string{
			"Authorization": "Bearer " + st.cronSecret}})
		if r.status != http.StatusOK {
			t.Fatalf("cron: %d %s", r.status, r.body)
		}
		res = r.json(t)
		if res["total_processed"] == float64(0) {
			return errors.New("nothing due yet")
		}
		return nil
	})
	if res["total_processed"] != float64(1) || res["successful"] != float64(1) || res["failed"] != float64(0) ||
		res["message"] == "" {
		t.Fatalf("cron answer %v", res)
	}
	if got := st.logs(sk, "?status=FAILED"); len(got) != 0 {
		t.Fatalf("still failed after the cron run: %v", got)
	}
}
