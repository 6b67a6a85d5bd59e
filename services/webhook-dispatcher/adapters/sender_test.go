package adapters_test

import (
	"context"
	"crypto/x509"
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
	s := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, RootCAs: pool})
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
	}
	for _, target := range targets {
		out := s.Send(context.Background(), target, nil, []byte(`{}`))
		if out.Succeeded() || !strings.HasPrefix(out.Error, "blocked address") || out.StatusCode != 0 {
			t.Errorf("%s: %+v, want a blocked address", target, out)
		}
	}
	if out := s.Send(context.Background(), "http://example.com/hook", nil, nil); !strings.HasPrefix(out.Error, "blocked address") {
		t.Errorf("http target without WEBHOOK_ALLOW_HTTP: %+v", out)
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver was reached %d times", hits.Load())
	}
	// The same receiver is reachable once private networks are allowed.
	open := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, RootCAs: pool,
		Policy: domain.URLPolicy{AllowPrivateNetworks: true}})
	if out := open.Send(context.Background(), "https://127.0.0.1:"+port+"/hook", nil, nil); !out.Succeeded() {
		t.Fatalf("allowed private network: %+v", out)
	}
}

func TestSenderOutcomes(t *testing.T) {
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
		}, 500, "endpoint answered HTTP 500", 1000},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
		}, 302, "endpoint answered HTTP 302 (redirects are not followed)", -1},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}, 0, "timeout: no answer within 200ms", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, pool, _ := tlsReceiver(t, c.handler)
			s := adapters.NewSender(adapters.SenderConfig{Timeout: 200 * time.Millisecond, RootCAs: pool,
				Policy: domain.URLPolicy{AllowPrivateNetworks: true}})
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
	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		s := adapters.NewSender(adapters.SenderConfig{Timeout: time.Second, Policy: domain.URLPolicy{AllowPrivateNetworks: true}})
		if out := s.Send(context.Background(), "https://"+addr+"/", nil, nil); out.Error != "connection refused" {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		srv, _, _ := tlsReceiver(t, ok)
		s := adapters.NewSender(adapters.SenderConfig{Timeout: time.Second, Policy: domain.URLPolicy{AllowPrivateNetworks: true}})
		if out := s.Send(context.Background(), srv.URL, nil, nil); !strings.HasPrefix(out.Error, "tls: ") {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("dns", func(t *testing.T) {
		s := adapters.NewSender(adapters.SenderConfig{Timeout: 2 * time.Second, Policy: domain.URLPolicy{AllowPrivateNetworks: true}})
		if out := s.Send(context.Background(), "https://no-such-host.invalid/", nil, nil); !strings.HasPrefix(out.Error, "dns: ") {
			t.Fatalf("outcome %+v", out)
		}
	})
}
