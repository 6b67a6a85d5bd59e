package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardScreenshots writes a full-page screenshot of every dashboard page at 375 px (a
// phone) and 1440 px (a laptop) into $SCREENSHOTS_DIR, from a stack with a little of everything
// in it. `make screenshots` runs it into docs/dashboard/, which the README shows; without
// SCREENSHOTS_DIR it has nothing to do.
func TestDashboardScreenshots(t *testing.T) {
	dir := os.Getenv("SCREENSHOTS_DIR")
	if dir == "" {
		t.Skip("writes screenshots only when SCREENSHOTS_DIR is set (make screenshots)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := newStack(t)
	b := newBrowser(t)
	pages := seedForScreenshots(t, s)
	shoot := func(name string) {
		for _, width := range []int64{375, 1440} {
			b.do(chromedp.EmulateViewport(width, 900))
			b.open(b.location())
			png := run(b, chromedp.FullScreenshot(100))
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
			if err := os.WriteFile(file, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.open(s.url + "/dashboard/signin")
	shoot("signin")
	b.signIn(s.url, s.creds.Keys.SKTest)
	for _, p := range pages {
		b.open(s.url + p.path)
		if p.wait != "" {
			b.waitText("main", p.wait)
		}
		shoot(p.name)
	}
}

type screenshotPage struct{ name, path, wait string }

// seedForScreenshots fills the demo company's test environment through the API: merchants in
// each kind of status, a funded pool with a threshold, payments, and webhook deliveries that
// failed and succeeded.
func seedForScreenshots(t *testing.T, s *stack) []screenshotPage {
	t.Helper()
	key := s.creds.Keys.SKTest
	rcv := newFlakyReceiver(t)
	s.must(s.call(http.MethodPost, "/api/v1/dashboard/webhooks/config", key,
		map[string]any{"url": rcv.srv.URL + "/hooks", "enabled": true}), http.StatusOK)
	s.must(s.call(http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", key, map[string]any{"amount": "500.00"}),
		http.StatusCreated)
	s.must(s.call(http.MethodPatch, "/api/v1/dashboard/pool/settings", key, map[string]any{"low_threshold": "350.00"}),
		http.StatusOK)
	shop, _ := s.createMerchant(key, "Corner Shop")
	cafe, _ := s.createMerchant(key, "Harbour Café")
	frozen, _ := s.createMerchant(key, "Night Market Stall")
	paused, _ := s.createMerchant(key, "Pop-up Bakery")
	var payment string
	for i, amount := range []string{"12.50", "4.75", "23.00", "8.20", "61.99", "3.10"} {
		merchant := shop
		if i%2 == 1 {
			merchant = cafe
		}
		if i == 3 {
			rcv.status.Store(http.StatusOK)
		}
		r := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", key,
			map[string]any{"merchant_id": merchant, "amount": amount}), http.StatusCreated)
		payment = r.body["payment"].(map[string]any)["payment_id"].(string)
	}
	s.must(s.call(http.MethodPatch, "/api/v1/admin/merchants/"+frozen+"/status", "Bearer "+s.creds.AdminToken,
		map[string]any{"status": "FROZEN", "reason": "chargeback investigation"}), http.StatusOK)
	s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+paused+"/status", key,
		map[string]any{"status": "PAUSED"}), http.StatusOK)
	var failed string
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/dashboard/webhooks/logs?status=FAILED&limit=1", key, nil)
		logs, _ := r.body["logs"].([]any)
		if len(logs) == 0 {
			return fmt.Errorf("no failed delivery yet: %s", r)
		}
		failed = logs[0].(map[string]any)["id"].(string)
		return nil
	})
	return []screenshotPage{
		{"overview", "/dashboard/", "Recent payments"},
		{"merchants", "/dashboard/merchants", "Corner Shop"},
		{"merchant", "/dashboard/merchants/" + shop, "PAYMENT"},
		{"merchant-frozen", "/dashboard/merchants/" + frozen, "chargeback investigation"},
		{"pool", "/dashboard/pool", "Movements"},
		{"payments", "/dashboard/payments", "USDC"},
		{"payment", "/dashboard/payments/" + payment, "CONFIRMED"},
		{"webhooks", "/dashboard/webhooks", "Delivery log"},
		{"delivery", "/dashboard/webhooks/deliveries/" + failed, "receiver says"},
		{"developers", "/dashboard/developers", "API keys"},
	}
}
