package dashboard

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/gateway/domain"
)

// After sign-in the browser goes back only to a page of the dashboard (no open redirect).
func TestSafeNextStaysInTheDashboard(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/dashboard/pool?type=DEBIT":  "/dashboard/pool?type=DEBIT",
		"":                            "/dashboard/",
		"https://evil.example/":       "/dashboard/",
		"//evil.example/dashboard/":   "/dashboard/",
		"/dashboard/\\evil":           "/dashboard/",
		"/dashboard/signin?next=x":    "/dashboard/",
		"/api/v1/management/whoami":   "/dashboard/",
		"/dashboard/x\r\nSet-Cookie:": "/dashboard/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// The CSRF token is bound to its session: another session's token never matches.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	t.Parallel()
	a, b := newToken(), newToken()
	if a == b || len(a) != 43 {
		t.Fatalf("tokens %q %q", a, b)
	}
	if !sameToken(csrfToken(a), csrfToken(a)) || sameToken(csrfToken(a), csrfToken(b)) || sameToken("", "") {
		t.Error("csrf tokens do not tell sessions apart")
	}
	if strings.Contains(csrfToken(a), a) {
		t.Error("the csrf token reveals the session token")
	}
}

// Requests a browser marks as coming from another site are refused; tools that send neither
// header are left to the CSRF token.
func TestCrossSiteBrowserRequestsAreRefusedAndHeaderlessOnesAllowed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		origin, site string
		want         bool
	}{
		{"", "", true},
		{"http://gw.example:8080", "same-origin", true},
		{"https://evil.example", "", false},
		{"", "cross-site", false},
		{"", "same-site", false},
		{"null", "", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "http://gw.example:8080/dashboard/merchants", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if got := sameOrigin(r); got != c.want {
			t.Errorf("origin %q site %q: %v, want %v", c.origin, c.site, got, c.want)
		}
	}
}

// Page links keep the filters and drop page 1; the page number is bounded.
func TestPagerLinksKeepTheFiltersAndThePageNumberIsBounded(t *testing.T) {
	t.Parallel()
	p := pager{Page: 2, HasMore: true, Total: 60, query: url.Values{"type": {"DEBIT"}, "page": {"2"}}, path: "/dashboard/pool"}
	if p.Prev() != "/dashboard/pool?type=DEBIT" || p.Next() != "/dashboard/pool?page=3&type=DEBIT" || p.Pages() != 3 ||
		p.offset() != 25 {
		t.Errorf("prev %q next %q pages %d offset %d", p.Prev(), p.Next(), p.Pages(), p.offset())
	}
	for _, bad := range []string{"0", "-1", "x", "4001", "1.5"} {
		if _, err := parsePage(url.Values{"page": {bad}}); err == nil {
			t.Errorf("page %q accepted", bad)
		}
	}
	if n, err := parsePage(url.Values{}); n != 1 || err != nil {
		t.Errorf("no page: %d %v", n, err)
	}
}

// The chart draws the oldest movement on the left and labels its range with the API's own
// amounts; the threshold line is drawn only within the range.
func TestBalanceChartDrawsOldestLeftAndThresholdOnlyWithinRange(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	mv := func(after string, minutes int) domain.PoolTransaction {
		return domain.PoolTransaction{BalanceAfter: money.MustParse(after), CreatedAt: at.Add(time.Duration(minutes) * time.Minute)}
	}
	// Newest first, as the API lists them.
	c := balanceChart([]domain.PoolTransaction{mv("50.00", 2), mv("150.123456", 1), mv("100.00", 0)}, money.MustParse("75"))
	if c.Points != "0.0,80.1 300.0,0.0 600.0,160.0" {
		t.Errorf("points %q", c.Points)
	}
	if c.High.String() != "150.123456" || c.Low.String() != "50.00" || !c.From.Equal(at) || c.Count != 3 {
		t.Errorf("labels %s %s %v %d", c.High, c.Low, c.From, c.Count)
	}
	if c.ThresholdY < 119 || c.ThresholdY > 121 {
		t.Errorf("threshold at y %v", c.ThresholdY)
	}
	if off := balanceChart([]domain.PoolTransaction{mv("10", 0)}, money.MustParse("500")); off.ThresholdY != -1 || off.Points == "" {
		t.Errorf("one movement, threshold above: %+v", off)
	}
	if empty := balanceChart(nil, money.MustParse("1")); empty.Points != "" {
		t.Errorf("no movements drew %q", empty.Points)
	}
}

// Times go out in UTC inside <time datetime>, escaped, for the script to localise.
func TestTimesAreWrittenInUTCInsideATimeElement(t *testing.T) {
	t.Parallel()
	got := string(timestamp(time.Date(2026, 11, 25, 13, 4, 5, 6e6, time.FixedZone("CET", 3600))))
	want := `<time datetime="2026-11-25T12:04:05.006Z" data-local>2026-11-25 12:04:05 UTC</time>`
	if got != want {
		t.Errorf("timestamp = %s", got)
	}
	if s := "not a time"; string(timestampString(&s)) != "not a time" || timestampString(nil) != "—" {
		t.Error("timestampString of a non-time")
	}
}

// Every page template parses with the layout.
func TestEveryPageTemplateParsesWithTheLayout(t *testing.T) {
	t.Parallel()
	pages, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"signin", "error", "overview", "merchants", "merchant", "pool", "payments", "payment",
		"webhooks", "delivery", "developers", "api"} {
		if pages[name] == nil {
			t.Errorf("no page %s", name)
		}
	}
}

// A delivery log cursor is the last entry's time and id; anything else is a validation error.
func TestParseCursorReadsTimeAndIDAndRefusesMalformedOnes(t *testing.T) {
	t.Parallel()
	c, err := parseCursor("2026-11-25T12:00:00.123456Z_5f0c7a52-8e0f-4b4c-9d55-2d8e07b5c2f1")
	if err != nil || c.ID != "5f0c7a52-8e0f-4b4c-9d55-2d8e07b5c2f1" || c.CreatedAt.Nanosecond() != 123456000 {
		t.Fatalf("cursor %+v %v", c, err)
	}
	for _, bad := range []string{"x", "_id", "2026-11-25_"} {
		if _, err := parseCursor(bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
	if c, err := parseCursor(""); c != nil || err != nil {
		t.Errorf("empty cursor: %v %v", c, err)
	}
}
