package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/payplat/platform/pkg/testkit"
)

// The dashboard's browser tests drive Debian's chromium headless through chromedp. make test
// installs it first (scripts/ensure-chromium.sh); a machine where it could not be installed
// skips these tests with the reason, except in CI, where a missing browser fails them.

// chromiumPath finds the system browser: $CHROMIUM, else chromium or chromium-browser on PATH.
func chromiumPath(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "no chromium browser found (install it with scripts/ensure-chromium.sh, which `make test` runs, " +
		"or set CHROMIUM to its path); the dashboard's browser tests need it"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless chromium with its own profile (cookies), driving one tab.
type browser struct {
	t   testing.TB
	ctx context.Context
}

// newBrowser starts chromium at a 1440x900 window, closed when the test ends. The flags keep it
// from reaching for the network beyond the page (this machine has none) and let it run as root.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-device-scale-factor", "1"),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it must not carry a timeout (it would stop the browser).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx}
}

// do runs steps within 30 seconds, failing the test on error.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v (at %s)", err, b.location())
	}
}

// run runs one action within 30 seconds and returns its value.
func run[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browser: %v (at %s)", err, b.location())
	}
	return v
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	l, _ := chromedp.Run(ctx, chromedp.Location())
	return l
}

// open loads url and waits for its main content.
func (b *browser) open(url string) {
	b.t.Helper()
	b.do(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("main")))
}

// text is the text of the first element matching the CSS selector.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return run(b, chromedp.Text(chromedp.CSS(sel)))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	return run(b, chromedp.Evaluate[T](js))
}

// fill replaces the value of the field with the CSS selector by typing value.
func (b *browser) fill(sel, value string) {
	b.t.Helper()
	b.setValue(sel, "")
	b.do(chromedp.SendKeys(chromedp.CSS(sel), value))
}

// submit clicks the button and waits for the page it leads to: a new document (the old one's
// marker gone), loaded.
func (b *browser) submit(button string) {
	b.t.Helper()
	eval[bool](b, `window.__e2eOld = true`)
	b.do(chromedp.Click(chromedp.CSS(button)))
	b.waitLoaded()
}

// waitLoaded waits until a document other than the one marked by submit has loaded.
func (b *browser) waitLoaded() {
	b.t.Helper()
	testkit.WaitFor(b.t, 30*time.Second, 50*time.Millisecond, func() error {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](
			`window.__e2eOld === undefined && document.readyState === "complete"`))
		if err != nil || !ok {
			return fmt.Errorf("still on the page before, or loading (%v)", err)
		}
		return nil
	})
	b.do(chromedp.WaitVisible(chromedp.CSS("main")))
}

// waitText polls until the element's text contains want.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	testkit.WaitFor(b.t, 30*time.Second, 100*time.Millisecond, func() error {
		got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](
			fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||""`, sel)))
		if err != nil || !strings.Contains(got, want) {
			return fmt.Errorf("%s: %q does not contain %q (%v)", sel, got, want, err)
		}
		return nil
	})
}

// waitLocation polls until the page's URL contains want.
func (b *browser) waitLocation(want string) {
	b.t.Helper()
	testkit.WaitFor(b.t, 30*time.Second, 100*time.Millisecond, func() error {
		if l := b.location(); !strings.Contains(l, want) {
			return fmt.Errorf("at %s, want %s", l, want)
		}
		return nil
	})
}

// cookies returns the browser's cookies for url.
func (b *browser) cookies(url string) []*network.Cookie {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	if err != nil {
		b.t.Fatal(err)
	}
	return res.Cookies
}

// signIn signs in with key through the sign-in form and waits for the overview.
func (b *browser) signIn(base, key string) {
	b.t.Helper()
	b.open(base + "/dashboard/signin")
	b.fill("#key", key)
	b.submit("main form button[type=submit]")
}

// clickCSS clicks the first element matching the CSS selector.
func clickCSS(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(sel))
}

// setValue sets the value of the form control matching the CSS selector, as picking an option
// of a <select> does.
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	ok := eval[bool](b, fmt.Sprintf(`(function(){var e=document.querySelector(%q); if(!e) return false;
		e.value=%q; e.dispatchEvent(new Event("change",{bubbles:true})); return e.value===%q;})()`, sel, value, value))
	if !ok {
		b.t.Fatalf("could not set %s to %q", sel, value)
	}
}
