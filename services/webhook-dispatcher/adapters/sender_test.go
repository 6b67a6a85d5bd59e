package adapters_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// tlsReceiver is a real HTTPS receiver on 127.0.0.1 counting its hits, and a pool trusting it.
func tlsReceiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *x509.CertPool, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool, &hits
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// The SSRF guard refuses non-public addresses when the connection is dialled, after name
// resolution: a host name resolving to 127.0.0.1 is refused as surely as the literal.
func TestSenderRefusesNonPublicAddressesAtDialTime(t *testing.T) {
	srv, pool, hits := tlsReceiver(t, ok)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// Any port: the receiver's random one must reach the dial-time guard, which is under test.
	s := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, RootCAs: pool,
		Policy: domain.URLPolicy{AllowAnyPort: true}})
	targets := []string{
		"https://127.0.0.1:" + port + "/hook",
		"https://localhost:" + port + "/hook", // resolves to 127.0.0.1 (and ::1)
		"https://[::ffff:127.0.0.1]:" + port + "/hook",
		"https://[::1]:" + port + "/hook",
		"https://169.254.169.254/latest/meta-data/",
		"https://10.0.0.1/hook",
		"https://100.64.0.1/hook",
		"https://[fd00::1]/hook",
		"https://0.0.0.0:" + port + "/hook",
		"https://[::127.0.0.1]:" + port + "/hook", // IPv4-compatible
		"https://[fec0::1]/hook",                  // site-local
		"https://[100::1]/hook",                   // discard-only
	}
	for _, target := range targets {
		out := s.Send(context.Background(), target, nil, []byte(`{}`))
		if out.Succeeded() || out.Error != domain.FailConnect || !strings.Contains(out.Detail, "blocked address") ||
			out.StatusCode != 0 {
			t.Errorf("%s: %+v, want a blocked address", target, out)
		}
	}
	if out := s.Send(context.Background(), "http://example.com/hook", nil, nil); out.Error != domain.FailURL {
		t.Errorf("http target without WEBHOOK_ALLOW_HTTP: %+v", out)
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver was reached %d times", hits.Load())
	}
	// The same receiver is reachable once private networks are allowed.
	open := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, RootCAs: pool,
		Policy: domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true}})
	if out := open.Send(context.Background(), "https://127.0.0.1:"+port+"/hook", nil, nil); !out.Succeeded() {
		t.Fatalf("allowed private network: %+v", out)
	}
}

// A 2xx, an error status (its body cut to 1,000 characters), a redirect (not followed), a
// timeout, a connection closed without an answer and an untrusted certificate each give their
// own outcome.
func TestSenderReportsTheStatusOrTheKindOfFailureOfEachAttempt(t *testing.T) {
	var target atomic.Int64
	other, _, _ := tlsReceiver(t, func(w http.ResponseWriter, _ *http.Request) { target.Add(1) })
	cases := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int
		wantError  string
		wantBody   int
	}{
		{"2xx", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(202) }, 202, "", 0},
		{"500 with a long multibyte body", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write([]byte(strings.Repeat("€", 5000)))
		}, 500, "HTTP 500", 1000},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
		}, 302, "HTTP 302 (redirects are not followed)", -1},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}, 0, domain.FailTimeout, 0},
		{"connection closed without an answer", func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, 0, domain.FailResponse, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, pool, _ := tlsReceiver(t, c.handler)
			s := adapters.NewSender(adapters.SenderConfig{Timeout: 200 * time.Millisecond, RootCAs: pool,
				Policy: domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true}})
			out := s.Send(context.Background(), srv.URL+"/hook", map[string]string{"X-Test": "1"}, []byte(`{}`))
			if out.StatusCode != c.wantStatus || out.Error != c.wantError {
				t.Fatalf("outcome %+v, want status %d error %q", out, c.wantStatus, c.wantError)
			}
			if c.wantBody >= 0 && len([]rune(out.Body)) != c.wantBody {
				t.Fatalf("body of %d characters, want %d", len([]rune(out.Body)), c.wantBody)
			}
		})
	}
	if target.Load() != 0 {
		t.Fatal("a redirect was followed")
	}
	t.Run("untrusted certificate", func(t *testing.T) {
		srv, _, _ := tlsReceiver(t, ok)
		s := adapters.NewSender(adapters.SenderConfig{Timeout: time.Second,
			Policy: domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true}})
		if out := s.Send(context.Background(), srv.URL, nil, nil); out.Error != domain.FailTLS ||
			!strings.Contains(out.Detail, "certificate") {
			t.Fatalf("outcome %+v", out)
		}
	})
}

// The delivery log shows partners one message for every way of not connecting: a refused
// port, an unknown name and an address the guard refuses read the same, without an address,
// port or resolver answer (else the log is a port scanner and an internal-DNS oracle). The
// detail, for the service log, tells them apart.
func TestSenderFailuresRevealNothingToPartners(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	open := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second,
		Policy: domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true}})
	guarded := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second})
	cases := []struct {
		name, target string
		s            *adapters.Sender
		detail       string
	}{
		{"refused", "https://" + closed + "/", open, "connection refused"},
		{"unknown name", "https://no-such-host.invalid/", open, "no-such-host.invalid"},
		{"blocked address", "https://localhost/", guarded, "is a loopback address"},
		{"blocked metadata address", "https://169.254.169.254/", guarded, "169.254.169.254 is a metadata address"},
	}
	for _, c := range cases {
		out := c.s.Send(context.Background(), c.target, nil, nil)
		if out.Error != domain.FailConnect || out.StatusCode != 0 {
			t.Errorf("%s: partners read %q, want %q", c.name, out.Error, domain.FailConnect)
		}
		if !strings.Contains(out.Detail, c.detail) {
			t.Errorf("%s: detail %q lacks %q", c.name, out.Detail, c.detail)
		}
	}
}

// A receiver answering with a header block over MaxResponseHeaderBytes (Go's default is 10 MB)
// fails the attempt instead of being read into memory; ordinary headers are fine.
func TestSenderCapsResponseHeaders(t *testing.T) {
	if adapters.MaxResponseHeaderBytes < 16<<10 || adapters.MaxResponseHeaderBytes > 64<<10 {
		t.Fatalf("MaxResponseHeaderBytes %d, want 16 to 64 KB", adapters.MaxResponseHeaderBytes)
	}
	headers := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			for i := range n {
				w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("h", 1000))
			}
			w.WriteHeader(http.StatusOK)
		}
	}
	for _, c := range []struct {
		name    string
		headers int
		ok      bool
	}{{"8 KB", 8, true}, {"1 MB", 1024, false}} {
		srv, pool, _ := tlsReceiver(t, headers(c.headers))
		s := adapters.NewSender(adapters.SenderConfig{Timeout: 5 * time.Second, RootCAs: pool,
			Policy: domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true}})
		out := s.Send(context.Background(), srv.URL, nil, nil)
		switch {
		case c.ok && !out.Succeeded():
			t.Errorf("%s of headers: %+v", c.name, out)
		case !c.ok && (out.Succeeded() || out.StatusCode != 0 || out.Error != domain.FailResponse ||
			!strings.Contains(out.Detail, "exceeded")):
			t.Errorf("%s of headers: %+v, want %q", c.name, out, domain.FailResponse)
		}
	}
}

// Ports other than 443 and 8443 are refused on every attempt, before anything is dialled
// (a URL configured before the rule, or while WEBHOOK_ALLOW_ANY_PORT was on), unless allowed.
func TestSenderRefusesOtherPorts(t *testing.T) {
	srv, pool, hits := tlsReceiver(t, ok)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	strict := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, RootCAs: pool,
		Policy: domain.URLPolicy{AllowPrivateNetworks: true}})
	for _, target := range []string{"https://127.0.0.1:" + port + "/hook", "https://localhost:" + port + "/"} {
		if out := strict.Send(context.Background(), target, nil, nil); out.Error != domain.FailURL ||
			!strings.Contains(out.Detail, "port "+port) {
			t.Errorf("%s: %+v, want %q", target, out, domain.FailURL)
		}
	}
	plain := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second,
		Policy: domain.URLPolicy{AllowHTTP: true, AllowPrivateNetworks: true}})
	if out := plain.Send(context.Background(), "http://127.0.0.1/hook", nil, nil); out.Error != domain.FailURL ||
		!strings.Contains(out.Detail, "port 80 ") {
		t.Errorf("http:// without a port is port 80: %+v", out)
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver on port %s was reached %d times", port, hits.Load())
	}
	anyPort := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, RootCAs: pool,
		Policy: domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true}})
	if out := anyPort.Send(context.Background(), "https://127.0.0.1:"+port+"/hook", nil, nil); !out.Succeeded() {
		t.Fatalf("WEBHOOK_ALLOW_ANY_PORT: %+v", out)
	}
}
