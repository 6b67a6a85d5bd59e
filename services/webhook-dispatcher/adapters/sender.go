// Package adapters holds the webhook-dispatcher's ties to the outside: PostgreSQL (endpoints,
// delivery log) and the HTTP client that delivers webhooks behind the SSRF guard.
package adapters

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// SenderConfig configures a Sender.
type SenderConfig struct {
	// Timeout is how long a receiver has to answer (WEBHOOK_TIMEOUT).
	Timeout time.Duration
	// Policy says whether http://, non-public addresses and ports other than 443 and 8443 are
	// allowed.
	Policy domain.URLPolicy
	// RootCAs, when set, replaces the system roots (tests trust their own TLS receivers).
	RootCAs *x509.CertPool
}

// Sender POSTs webhook bodies. Redirects are never followed (a 3xx is a failed attempt), no
// proxy from the environment is used (it would dial on our behalf, past the guard), and every
// connection's resolved address is checked when it is dialled, so a host name that resolves
// to a private address, now or after a DNS change, is refused.
type Sender struct {
	client  *http.Client
	timeout time.Duration
	policy  domain.URLPolicy
}

// maxIdleConns bounds the keep-alive connections the Sender holds, in all and per host: at
// least one per endpoint lane in use, for a busy dispatcher.
const maxIdleConns = 2048

// MaxResponseHeaderBytes bounds the header block of a receiver's answer (HTTP/1.1 and HTTP/2).
// Go's default is 10 MB: with many lanes in flight, receivers answering with huge headers
// would hold that much memory each. No webhook receiver needs more than a few hundred bytes.
const MaxResponseHeaderBytes = 32 << 10

// NewSender returns a Sender that dials through the address guard unless cfg.Policy allows
// private networks, and keeps connections alive for every endpoint; a zero cfg.Timeout means 10s.
func NewSender(cfg SenderConfig) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	if !cfg.Policy.AllowPrivateNetworks {
		dialer.Control = guardDial
	}
	// Connections are kept alive for every endpoint: many endpoints often share one host (a
	// receiving platform), each lane with its own HTTP/1.1 connection, and a connection
	// closed for want of an idle slot costs a TLS handshake on the next attempt. Session
	// tickets make the handshakes that remain (after IdleConnTimeout) cheaper.
	transport := &http.Transport{
		Proxy:       nil,
		DialContext: dialer.DialContext,
		// Only a receiver that offers HTTP/2 in ALPN gets it (the Go client speaks it
		// without extra configuration then).
		ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.RootCAs,
			ClientSessionCache: tls.NewLRUClientSessionCache(maxIdleConns)},
		TLSHandshakeTimeout:    cfg.Timeout,
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    maxIdleConns,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
	}
	return &Sender{
		client: &http.Client{
			Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		timeout: cfg.Timeout,
		policy:  cfg.Policy,
	}
}

// guardDial runs after name resolution, on the address about to be connected to.
func guardDial(_, address string, _ syscall.RawConn) error {
	return domain.CheckDialAddress(address)
}

// Send POSTs body to target with headers and reports the outcome. It never returns an error:
// every failure is an outcome to record.
func (s *Sender) Send(ctx context.Context, target string, headers map[string]string, body []byte) domain.Outcome {
	u, err := url.Parse(target)
	if err != nil {
		return domain.Outcome{Error: domain.FailURL, Detail: "invalid endpoint url"}
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && s.policy.AllowHTTP) {
		return domain.Outcome{Error: domain.FailURL, Detail: "only https endpoints are allowed"}
	}
	if !s.policy.PortAllowed(u) {
		// Configured before the rule, or while WEBHOOK_ALLOW_ANY_PORT was on.
		return domain.Outcome{Error: domain.FailURL,
			Detail: "port " + domain.Port(u) + " is not allowed (WEBHOOK_ALLOW_ANY_PORT)"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return domain.Outcome{Error: domain.FailURL, Detail: "invalid endpoint url"}
	}
	for k, v := range headers {
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	// Standard Webhooks names its headers in lower case; HTTP/1.1 receivers see them as sent.
	for _, k := range []string{domain.HeaderStdID, domain.HeaderStdTimestamp, domain.HeaderStdSignature} {
		if v, ok := headers[k]; ok {
			delete(req.Header, http.CanonicalHeaderKey(k))
			req.Header[k] = []string{v}
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return failure(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, domain.MaxResponseRead))
	out := domain.Outcome{StatusCode: resp.StatusCode, Body: domain.ResponseSnippet(raw)}
	if !out.Succeeded() {
		out.Error = domain.FailHTTP(resp.StatusCode)
	}
	return out
}

// failure turns a transport error into the outcome of an attempt without an answer: one of
// the few partner-visible messages, and the error itself (without the URL, whose query may
// hold the partner's token) as the detail for the service log.
func failure(err error) domain.Outcome {
	detail := err
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		detail = urlErr.Err
	}
	return domain.Outcome{Error: classify(err), Detail: detail.Error()}
}

// classify names a transport error for partners: timed out, TLS error, could not connect
// (unknown name, refused, unreachable and blocked address alike), or no valid HTTP response.
func classify(err error) string {
	var (
		opErr     *net.OpError
		dnsErr    *net.DNSError
		certErr   *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		netErr    net.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return domain.FailTimeout
	case errors.Is(err, context.Canceled):
		return domain.FailCancelled
	case errors.Is(err, domain.ErrBlockedAddress), errors.As(err, &dnsErr),
		errors.As(err, &opErr) && opErr.Op == "dial":
		return domain.FailConnect
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &invalid), errors.As(err, &record), errors.As(err, &alert):
		return domain.FailTLS
	default:
		return domain.FailResponse
	}
}
