package e2e_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The dashboard's safety, in a real browser against the whole stack: the session cookie is
// HttpOnly and SameSite=Strict and the key stays out of the browser; pages carry the security
// headers; a form without the session's CSRF token, or from another origin, changes nothing;
// a session of one company never sees another's merchant, payment or delivery, nor, over SSE,
// its events; an idle session expires; rolling the key ends its sessions, an open page included.
func TestDashboardSessionsCannotBeReadForgedOrUsedOutsideTheirCompanyOrLifetime(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := newBrowser(t)
	base, keys := s.url, s.creds.Keys
	b.signIn(base, keys.SKTest)
	b.waitLocation("/dashboard/")
	cookie := dashboardCookieChecks(t, b, base, keys.SKTest)

	dashboardHeaderChecks(t, base, cookie)
	dashboardCSRFChecks(t, s, cookie)
	dashboardIsolation(t, s, b, cookie)
	dashboardSessionExpiry(t, s, b)
	dashboardKeyRoll(t, s, b)
}

// dashboardCookieChecks checks the session cookie and that the key is nowhere in the browser,
// and returns the cookie for direct requests.
func dashboardCookieChecks(t *testing.T, b *browser, base, key string) *http.Cookie {
	t.Helper()
	var session *http.Cookie
	for _, c := range b.cookies(base + "/dashboard/") {
		if strings.Contains(c.Value, key) {
			t.Errorf("cookie %s holds the API key", c.Name)
		}
		if c.Name == "payplat_session" {
			if !c.HTTPOnly || c.SameSite != "Strict" || c.Path != "/dashboard" {
				t.Errorf("session cookie: httpOnly %v sameSite %s path %s", c.HTTPOnly, c.SameSite, c.Path)
			}
			session = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if session == nil {
		t.Fatal("no session cookie after sign-in")
	}
	stored := eval[string](b, `JSON.stringify(localStorage)+JSON.stringify(sessionStorage)+document.cookie+document.documentElement.outerHTML`)
	if strings.Contains(stored, key) || strings.Contains(stored, session.Value) {
		t.Error("the key or the session token is readable by the page's script")
	}
	return session
}

// get requests path with the session cookie (no redirects followed).
func dashboardRequest(t *testing.T, method, rawURL string, cookie *http.Cookie, form url.Values, header ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func dashboardHeaderChecks(t *testing.T, base string, cookie *http.Cookie) {
	t.Helper()
	resp, _ := dashboardRequest(t, http.MethodGet, base+"/dashboard/merchants", cookie, nil)
	want := map[string]string{"Content-Security-Policy": "frame-ancestors 'none'", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
	for h, v := range want {
		if got := resp.Header.Get(h); !strings.Contains(got, v) {
			t.Errorf("%s: %q, want %q", h, got, v)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %s", csp)
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func dashboardCSRFChecks(t *testing.T, s *stack, cookie *http.Cookie) {
	t.Helper()
	_, page := dashboardRequest(t, http.MethodGet, s.url+"/dashboard/merchants", cookie, nil)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token in the merchants page")
	}
	token := m[1]
	form := func(csrf, email string) url.Values {
		return url.Values{"name": {"Forged Ltd"}, "email": {email}, "csrf": {csrf}}
	}
	refused := []struct {
		name   string
		form   url.Values
		header []string
	}{
		{"no token", form("", "a@example.com"), nil},
		{"another token", form(strings.Repeat("A", len(token)), "b@example.com"), nil},
		{"another origin", form(token, "c@example.com"), []string{"Origin", "https://evil.example"}},
		{"a cross-site fetch", form(token, "d@example.com"), []string{"Sec-Fetch-Site", "cross-site"}},
	}
	for _, tc := range refused {
		resp, body := dashboardRequest(t, http.MethodPost, s.url+"/dashboard/merchants", cookie, tc.form, tc.header...)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF_REJECTED") {
			t.Errorf("%s: %d", tc.name, resp.StatusCode)
		}
	}
	r := s.must(s.call(http.MethodGet, "/api/v1/management/merchants", s.creds.Keys.SKTest, nil), http.StatusOK)
	if ms := r.body["merchants"].([]any); len(ms) != 0 {
		t.Fatalf("refused forms created merchants: %s", r)
	}
	resp, _ := dashboardRequest(t, http.MethodPost, s.url+"/dashboard/merchants", cookie, form(token, "ok@example.com"),
		"Origin", s.url)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the same form with its token: %d", resp.StatusCode)
	}
}

var paymentIDInEvent = regexp.MustCompile(`"id":"([0-9a-f-]{36})"`)

func dashboardIsolation(t *testing.T, s *stack, b *browser, cookie *http.Cookie) {
	t.Helper()
	other := s.newCompany("Other Co")
	otherMerchant, _ := s.createMerchant(other.keys["sk_test"], "Other Shop")
	ours, _ := s.createMerchant(s.creds.Keys.SKTest, "Our Shop")

	// Over SSE: a stream of ours, while the other company pays first and we pay second.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/dashboard/events", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	if l := <-lines; !strings.HasPrefix(l, "retry:") {
		t.Fatalf("first line of the stream: %q", l)
	}
	theirs := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", other.keys["sk_test"],
		map[string]any{"merchant_id": otherMerchant, "amount": "5.00"}), http.StatusCreated)
	theirID := theirs.body["payment"].(map[string]any)["payment_id"].(string)
	mine := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", s.creds.Keys.SKTest,
		map[string]any{"merchant_id": ours, "amount": "6.00"}), http.StatusCreated)
	myID := mine.body["payment"].(map[string]any)["payment_id"].(string)
	seenMine := false
	for l := range lines {
		if strings.Contains(l, theirID) || strings.Contains(l, other.id) {
			t.Fatalf("our stream carried the other company's event: %s", l)
		}
		if m := paymentIDInEvent.FindStringSubmatch(l); m != nil && m[1] == myID && strings.Contains(l, "payment.confirmed") {
			seenMine = true
			break
		}
	}
	if !seenMine {
		t.Fatal("our stream ended before our own payment's confirmation")
	}
	cancel()

	for _, path := range []string{"/dashboard/merchants/" + otherMerchant, "/dashboard/payments/" + theirID,
		"/dashboard/webhooks/deliveries/" + theirID} {
		b.open(s.url + path)
		b.waitText("main", "NOT_FOUND")
	}
	b.open(s.url + "/dashboard/payments")
	if strings.Contains(eval[string](b, `document.body.innerText`), "Other Shop") {
		t.Error("the payments page shows the other company's payment")
	}
}

func dashboardSessionExpiry(t *testing.T, s *stack, b *browser) {
	t.Helper()
	// Twelve hours and a bit pass without a request (the idle clock is the database's).
	conn, err := pgx.Connect(context.Background(), s.creds.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(),
		`UPDATE gateway.dashboard_sessions SET last_seen_at = now() - interval '12 hours 1 minute'`); err != nil {
		t.Fatal(err)
	}
	b.open(s.url + "/dashboard/pool")
	b.waitLocation("reason=expired")
	b.waitText("main", "Your session expired")
	b.waitLocation("next=%2Fdashboard%2Fpool")
	b.fill("#key", s.creds.Keys.SKTest)
	b.submit("main form button[type=submit]")
	b.waitLocation("/dashboard/pool")
}

func dashboardKeyRoll(t *testing.T, s *stack, b *browser) {
	t.Helper()
	b.open(s.url + "/dashboard/")
	b.waitText("#live-state", "Live")
	cookie := findCookie(b, s.url, "payplat_session")
	r := s.must(s.call(http.MethodPost, "/api/v1/admin/companies/"+s.creds.Company.ID+"/keys/sk_test/roll",
		"Bearer "+s.creds.AdminToken, nil), http.StatusOK)
	// The open page is told over SSE and goes to the sign-in page by itself.
	b.waitLocation("reason=rolled")
	b.waitText("main", "has been rolled")
	resp, _ := dashboardRequest(t, http.MethodGet, s.url+"/dashboard/", cookie, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/dashboard/signin") {
		t.Errorf("the rolled key's session still opens the overview: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	b.signInRefused(s.url, s.creds.Keys.SKTest, "not accepted")
	newKey, _ := r.body["api_key"].(map[string]any)["key"].(string)
	b.signIn(s.url, newKey)
	b.waitText("#mode-banner", "TEST MODE")
}

func findCookie(b *browser, base, name string) *http.Cookie {
	b.t.Helper()
	for _, c := range b.cookies(base + "/dashboard/") {
		if c.Name == name {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	b.t.Fatalf("no cookie %s", name)
	return nil
}
