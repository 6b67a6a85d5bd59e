package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// The dashboard's flows, in a real browser against the whole stack: sign-in (publishable and
// unknown keys refused beside the field), merchants (create with the API's validation message,
// wallet and copy button, pause and activate, a platform freeze read-only with its reason, the
// ledger), the pool (simulated deposit, settings with the API's message, type filter, chart),
// payments (simulate, detail, a payment made elsewhere appearing without reload), webhooks
// (endpoint, secret shown once, log by status, a delivery's detail, retry now, secret roll),
// developers (whoami, masked keys), sign-out, and live mode without the test-only forms.
func TestDashboardFlowsWorkInARealBrowserAgainstTheWholeStack(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := newBrowser(t)
	base := s.url
	keys := s.creds.Keys

	b.signInRefused(base, keys.PKTest, "Publishable keys")
	b.signInRefused(base, "sk_test_"+strings.Repeat("x", 40), "not accepted")
	b.signIn(base, keys.SKTest)
	b.waitLocation("/dashboard/")
	if got := b.text("#mode-banner"); !strings.Contains(got, "TEST MODE") {
		t.Errorf("test-mode banner: %q", got)
	}
	b.waitText("#overview-payments", "No payments yet")
	dashboardKeyboardAndWidths(t, b, base)

	merchantID := dashboardMerchants(t, s, b)
	dashboardPool(t, b, base)
	dashboardPayments(t, s, b, merchantID)
	dashboardWebhooks(t, s, b)
	dashboardDevelopers(t, s, b)

	b.open(base + "/dashboard/")
	b.submit("form[action='/dashboard/signout'] button")
	b.waitText("main", "You are signed out")
	b.open(base + "/dashboard/pool")
	b.waitLocation("/dashboard/signin")

	b.signIn(base, keys.SKLive)
	b.waitText("#mode-banner", "LIVE MODE")
	b.open(base + "/dashboard/payments")
	if n := eval[int](b, `document.querySelectorAll("form[action='/dashboard/payments'][method=post]").length`); n != 0 {
		t.Errorf("live mode shows %d simulate forms", n)
	}
	b.open(base + "/dashboard/pool")
	if n := eval[int](b, `document.querySelectorAll("form[action='/dashboard/pool/deposits']").length`); n != 0 {
		t.Errorf("live mode shows the simulated deposit")
	}
}

// signInRefused tries key and expects the sign-in page again with want beside the key field.
func (b *browser) signInRefused(base, key, want string) {
	b.t.Helper()
	b.signIn(base, key)
	b.waitLocation("/dashboard/signin")
	if got := b.text("#key-error"); !strings.Contains(got, want) {
		b.t.Errorf("sign-in with %.8s…: error %q, want %q", key, got, want)
	}
}

func dashboardMerchants(t *testing.T, s *stack, b *browser) string {
	t.Helper()
	base := s.url
	b.open(base + "/dashboard/merchants")
	b.waitText("main", "No merchants yet")
	b.fill("#m-name", "Corner Shop")
	b.fill("#m-email", "not-an-email")
	b.submit("form[action='/dashboard/merchants'] button")
	if got := b.text("#m-email-err"); got != "must be a valid email address" {
		t.Errorf("bad email: error beside the field %q", got)
	}
	if got := eval[string](b, `document.querySelector("#m-name").value`); got != "Corner Shop" {
		t.Errorf("the name typed was not kept: %q", got)
	}
	b.fill("#m-email", "shop@example.com")
	b.submit("form[action='/dashboard/merchants'] button")
	b.waitText("main .notice", "Merchant created")
	wallet := b.text("#wallet")
	if !strings.HasPrefix(wallet, "0x") || len(wallet) != 42 {
		t.Errorf("wallet %q", wallet)
	}
	b.do(clickCSS("button[data-copy=wallet]"))
	b.waitText("button[data-copy=wallet]", "Copied")
	id := strings.TrimPrefix(b.location(), base+"/dashboard/merchants/")
	id, _, _ = strings.Cut(id, "?")

	b.submit("form[action$='/status'] button")
	b.waitText("main", "PAUSED")
	b.submit("form[action$='/status'] button")
	b.waitText("main", "Pause merchant")

	frozen, _ := s.createMerchant(s.creds.Keys.SKTest, "Frozen Goods")
	s.must(s.call(http.MethodPatch, "/api/v1/admin/merchants/"+frozen+"/status", "Bearer "+s.creds.AdminToken,
		map[string]any{"status": "FROZEN", "reason": "chargeback investigation"}), http.StatusOK)
	b.open(base + "/dashboard/merchants/" + frozen)
	b.waitText("main", "chargeback investigation")
	if n := eval[int](b, `document.querySelectorAll("form[action$='/status']").length`); n != 0 {
		t.Errorf("a FROZEN merchant offers %d status forms", n)
	}
	b.open(base + "/dashboard/merchants")
	b.waitText("main table", "FROZEN")
	b.waitText("main table", "chargeback investigation")
	b.waitText("#merchant-count", "2 merchants")
	return id
}

func dashboardPool(t *testing.T, b *browser, base string) {
	t.Helper()
	b.open(base + "/dashboard/pool")
	b.waitText("#pool-chart", "No movements yet")
	b.fill("#dep-amount", "-5")
	b.submit("form[action='/dashboard/pool/deposits'] button")
	b.waitText("#dep-amount-err", "greater than 0")
	b.fill("#dep-amount", "250.5")
	b.submit("form[action='/dashboard/pool/deposits'] button")
	b.waitText("main .notice", "Simulated deposit recorded")
	b.waitText("#pool-balance .big", "250.50 USDC")
	b.fill("#threshold", "12.3456789")
	b.submit("form[action='/dashboard/pool/settings'] button")
	b.waitText("#threshold-err", "at most 6 decimals")
	b.fill("#threshold", "300")
	b.do(clickCSS("#auto"))
	b.submit("form[action='/dashboard/pool/settings'] button")
	b.waitText("main .notice", "Pool settings saved")
	b.waitText("#pool-balance", "Low balance")
	b.waitText("#pool-balance", "auto top-up on")
	if n := eval[int](b, `document.querySelectorAll("#pool-chart svg polyline").length`); n != 1 {
		t.Errorf("balance chart: %d lines", n)
	}
	b.open(base + "/dashboard/pool?type=WITHDRAWAL")
	b.waitText("#pool-movements", "No WITHDRAWAL movements")
	b.open(base + "/dashboard/pool?type=DEPOSIT")
	b.waitText("#pool-movements table", "250.50")
}

func dashboardPayments(t *testing.T, s *stack, b *browser, merchantID string) {
	t.Helper()
	base := s.url
	b.open(base + "/dashboard/payments")
	// The API checks the merchant first (SPEC §3.1): the newest merchant is the frozen one.
	b.fill("#sim-amount", "1.2345678")
	b.submit("form[action='/dashboard/payments'] button")
	b.waitText("main .alert", "not ACTIVE")
	b.setValue("#sim-merchant", merchantID)
	b.submit("form[action='/dashboard/payments'] button")
	b.waitText("#sim-amount-err", "at most 6 decimals")
	b.setValue("#sim-merchant", merchantID)
	b.fill("#sim-amount", "12.5")
	b.submit("form[action='/dashboard/payments'] button")
	b.waitText("main .notice", "Simulated payment confirmed")
	b.waitText("#payments-list", "12.50 USDC")
	b.submit("#payments-list tbody a")
	b.waitText("main", "CONFIRMED")
	b.waitText("main", "Corner Shop")

	// A payment made elsewhere (the API) appears on the open page without a reload.
	b.open(base + "/dashboard/payments?status=CONFIRMED")
	eval[bool](b, `window.__sameDocument = true`)
	b.waitText("#live-state", "Live")
	r := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", s.creds.Keys.SKTest,
		map[string]any{"merchant_id": merchantID, "amount": "7.25"}), http.StatusCreated)
	b.waitText("#payments-list", "7.25 USDC")
	if !eval[bool](b, `window.__sameDocument === true`) {
		t.Error("the page reloaded to show the new payment")
	}
	paymentID := r.body["payment"].(map[string]any)["payment_id"].(string)
	b.waitText("#payments-list", paymentID[:8])

	b.open(base + "/dashboard/merchants/" + merchantID)
	b.waitText("#merchant-ledger", "PAYMENT")
	b.waitText("#merchant-ledger", "19.75")
	b.open(base + "/dashboard/")
	b.waitText("#overview-payments", "7.25 USDC")
}

// flakyReceiver is a webhook endpoint answering the status it is set to.
type flakyReceiver struct {
	srv    *httptest.Server
	status atomic.Int32
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	r := &flakyReceiver{}
	r.status.Store(http.StatusInternalServerError)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(r.status.Load()))
		_, _ = fmt.Fprintf(w, "receiver says %d", r.status.Load())
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func dashboardWebhooks(t *testing.T, s *stack, b *browser) {
	t.Helper()
	base := s.url
	rcv := newFlakyReceiver(t)
	b.open(base + "/dashboard/webhooks")
	b.waitText("#webhook-log", "add an endpoint")
	b.fill("#url", "ftp://example.com/hooks")
	b.submit("form[action='/dashboard/webhooks/config'] button")
	if got := b.text("#url-err"); got == "" {
		t.Error("a bad webhook URL shows no error beside the field")
	}
	b.fill("#url", rcv.srv.URL+"/hooks")
	b.submit("form[action='/dashboard/webhooks/config'] button")
	secret := b.text("#webhook-secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("first configuration shows secret %q", secret)
	}
	b.waitText("main", "shown only this once")
	b.open(base + "/dashboard/webhooks")
	if strings.Contains(eval[string](b, `document.body.innerHTML`), secret) {
		t.Error("the signing secret is shown again")
	}

	// A payment's deliveries fail at the receiver and appear in the log live.
	merchantID, _ := s.createMerchant(s.creds.Keys.SKTest, "Hook Shop")
	s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", s.creds.Keys.SKTest,
		map[string]any{"merchant_id": merchantID, "amount": "3.00"}), http.StatusCreated)
	b.waitText("#webhook-log", "payment.confirmed")
	b.waitText("#webhook-log", "FAILED")
	b.open(base + "/dashboard/webhooks?status=SUCCESS")
	b.waitText("#webhook-log", "No SUCCESS deliveries")
	b.open(base + "/dashboard/webhooks?status=FAILED")
	b.submit("#webhook-log tbody a")
	b.waitText("#delivery-facts", "receiver says 500")
	b.waitText("#delivery-facts", "FAILED")
	b.waitText("main", `"event"`)
	rcv.status.Store(http.StatusOK)
	b.submit("form[action$='/retry'] button")
	b.waitText("main .notice", "status SUCCESS")
	b.waitText("#delivery-facts", "receiver says 200")

	b.open(base + "/dashboard/")
	b.waitText("#overview-webhooks", "succeeded")

	b.open(base + "/dashboard/webhooks")
	b.submit("form[action='/dashboard/webhooks/secret'] button")
	b.waitText("#confirm-err", "Tick the box")
	b.do(clickCSS("#confirm"))
	b.submit("form[action='/dashboard/webhooks/secret'] button")
	rolled := b.text("#webhook-secret")
	if !strings.HasPrefix(rolled, "whsec_") || rolled == secret {
		t.Errorf("rolled secret %q (first %q)", rolled, secret)
	}
}

func dashboardDevelopers(t *testing.T, s *stack, b *browser) {
	t.Helper()
	b.open(s.url + "/dashboard/developers")
	b.waitText("#company-id", s.creds.Company.ID)
	html := eval[string](b, `document.body.innerHTML`)
	for name, key := range map[string]string{"sk_test": s.creds.Keys.SKTest, "sk_live": s.creds.Keys.SKLive,
		"pk_test": s.creds.Keys.PKTest, "pk_live": s.creds.Keys.PKLive} {
		if strings.Contains(html, key) {
			t.Errorf("the developers page shows the %s key", name)
		}
		if !strings.Contains(html, key[:12]) {
			t.Errorf("the developers page lacks the masked %s key %s…", name, key[:12])
		}
	}
	b.submit("a[href='/dashboard/developers/api']")
	b.waitText("main", "/api/v1/management/payments")
}

// dashboardKeyboardAndWidths: the first Tab reaches the skip link, focus is visible, the
// navigation is reachable by keyboard, and no page is wider than a 375 px phone (tables scroll
// inside their own box).
func dashboardKeyboardAndWidths(t *testing.T, b *browser, base string) {
	t.Helper()
	b.open(base + "/dashboard/")
	b.do(chromedp.KeyEvent("\t"))
	if got := eval[string](b, `document.activeElement.className + "|" + getComputedStyle(document.activeElement).outlineStyle`); got != "skip|solid" {
		t.Errorf("first Tab: focused %q, want the skip link with a visible outline", got)
	}
	b.do(chromedp.KeyEvent("\r"))
	if got := eval[string](b, `document.activeElement.id`); got != "main" {
		t.Errorf("the skip link moved focus to %q", got)
	}
	b.open(base + "/dashboard/")
	found := false
	for range 10 {
		b.do(chromedp.KeyEvent("\t"))
		if eval[string](b, `document.activeElement.getAttribute("href") || ""`) == "/dashboard/merchants" {
			found = true
			break
		}
	}
	if !found {
		t.Fatal("the Merchants link cannot be reached with Tab")
	}
	b.do(chromedp.KeyEvent("\r"))
	b.waitLocation("/dashboard/merchants")

	b.do(chromedp.EmulateViewport(375, 812))
	defer b.do(chromedp.EmulateViewport(1440, 900))
	for _, page := range []string{"/dashboard/", "/dashboard/merchants", "/dashboard/pool", "/dashboard/payments",
		"/dashboard/webhooks", "/dashboard/developers"} {
		b.open(base + page)
		if w := eval[int](b, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("%s is %d px wide at 375 px", page, w)
		}
	}
}
