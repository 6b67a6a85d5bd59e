package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/api/apitest"

	"github.com/payplat/platform/services/devstack"
)

// Partner is the HTTP client of a partner company: its requests, and how it retries them. With
// several gateways it sends each request to the next one in turn, and, like a load balancer,
// to another when one refuses the connection (nothing was sent).
type Partner struct {
	bases    []string
	next     atomic.Uint64
	http     *http.Client
	contract *contractLog
}

// answer is an HTTP answer, or the transport error that stood in for one.
type answer struct {
	status int
	body   map[string]any
	err    error
}

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// retryable tells whether a client with an Idempotency-Key should send the request again: no
// answer, a 5xx, or the key still held by an earlier attempt that has not finished.
func (a answer) retryable() bool {
	return a.err != nil || a.status >= 500 || (a.status == http.StatusConflict && a.code() == "IDEMPOTENCY_KEY_IN_PROGRESS")
}

// newPartner returns the partner of the gateways at bases. Every answer is checked against the
// API document (api/openapi.yaml), faults or not: a 5xx a fault causes must be a documented one.
func newPartner(bases ...string) (*Partner, error) {
	v, err := apitest.New()
	if err != nil {
		return nil, err
	}
	log := &contractLog{}
	// A request to a frozen gateway hangs until the client gives up: a cut connection.
	return &Partner{bases: bases, contract: log, http: &http.Client{Timeout: 12 * time.Second,
		Transport: v.Transport(&http.Transport{MaxIdleConnsPerHost: 64}, log.report)}}, nil
}

// contractLog keeps the exchanges that broke the API document.
type contractLog struct {
	mu       sync.Mutex
	count    int
	examples []string
}

func (l *contractLog) report(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count++
	if len(l.examples) < 20 {
		l.examples = append(l.examples, err.Error())
	}
}

// result is the invariant: every answer the partner got matches the document.
func (l *contractLog) result(requests int) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := Result{Name: "contract: every answer matches api/openapi.yaml",
		Counts: fmt.Sprintf("%d answers broke the document; checked: every answer of %d recorded requests, the set-up's and the cron calls'", l.count, requests)}
	for _, e := range l.examples {
		r.violate("%s", e)
	}
	if l.count > len(l.examples) {
		r.violate("... and %d more", l.count-len(l.examples))
	}
	return r
}

// base is the gateway the first try of the next request goes to.
func (p *Partner) base() string { return p.bases[int(p.next.Add(1)%uint64(len(p.bases)))] }

// call sends one request with the API key (or a "Bearer ..." authorization) and the
// Idempotency-Key when not empty, to the next gateway, or another one when it refuses the
// connection.
func (p *Partner) call(ctx context.Context, method, path, auth, idemKey string, body any) answer {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return answer{err: err}
		}
	}
	first := int(p.next.Add(1))
	var a answer
	for i := range len(p.bases) {
		a = p.callOne(ctx, p.bases[(first+i)%len(p.bases)], method, path, auth, idemKey, raw, body != nil)
		var op *net.OpError
		if a.err == nil || !errors.As(a.err, &op) || op.Op != "dial" {
			return a
		}
	}
	return a
}

func (p *Partner) callOne(ctx context.Context, base, method, path, auth, idemKey string, raw []byte, hasBody bool) answer {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(auth) > 7 && auth[:7] == "Bearer " {
		req.Header.Set("Authorization", auth)
	} else {
		req.Header.Set("x-api-key", auth)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, err: err}
	_ = json.Unmarshal(b, &a.body)
	return a
}

// send sends a request once without an Idempotency-Key, or with one until the answer is final
// (retried after a cut connection, a 5xx or a key in progress, for up to patience).
func (p *Partner) send(ctx context.Context, method, path, auth string, withKey bool, body any, patience time.Duration) (answer, string, int) {
	if !withKey {
		return p.call(ctx, method, path, auth, "", body), "", 1
	}
	key := uuid.NewString()
	deadline := time.Now().Add(patience)
	for attempt := 1; ; attempt++ {
		a := p.call(ctx, method, path, auth, key, body)
		if !a.retryable() || time.Now().After(deadline) || ctx.Err() != nil {
			return a, key, attempt
		}
		select {
		case <-ctx.Done():
			return a, key, attempt
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Tenant is a company of the run in the test environment, with its merchants.
type Tenant struct {
	CompanyID string
	Key       string // sk_test
	Merchants []Merchant
	// Webhooks: the company has an endpoint at the receiver, with Secret.
	Webhooks bool
	Secret   string
}

// Merchant is a merchant with its wallet.
type Merchant struct {
	ID     string
	Wallet string
}

// setupTenants creates the companies through the admin API and their merchants through the
// management API, and points the first withHooks companies' webhooks at the receiver. It runs
// before any fault: its requests must all succeed.
func setupTenants(ctx context.Context, p *Partner, adminToken string, companies, merchants, withHooks int, rc *Receiver) ([]Tenant, error) {
	admin := devstack.AdminClient{BaseURL: p.base(), AdminToken: adminToken, HTTP: p.http}
	tenants := make([]Tenant, companies)
	for i := range tenants {
		c, keys, err := admin.CreateCompany(ctx, fmt.Sprintf("Chaos Company %d", i))
		if err != nil {
			return nil, err
		}
		t := Tenant{CompanyID: c.ID, Key: keys.SKTest}
		for j := range merchants {
			m, err := createMerchant(ctx, p, t.Key, fmt.Sprintf("Chaos Shop %d-%d", i, j), fmt.Sprintf("shop-%d-%d@chaos.example", i, j))
			if err != nil {
				return nil, err
			}
			t.Merchants = append(t.Merchants, m)
		}
		if i < withHooks {
			a := p.call(ctx, http.MethodPost, "/api/v1/dashboard/webhooks/config", t.Key, "",
				map[string]any{"url": rc.URL(t.CompanyID), "enabled": true})
			secret, _ := a.body["secret"].(string)
			if a.status != http.StatusOK || secret == "" {
				return nil, fmt.Errorf("configuring webhooks: %d %v %v", a.status, a.body, a.err)
			}
			t.Webhooks, t.Secret = true, secret
			rc.SetSecret(t.CompanyID, secret)
		}
		tenants[i] = t
	}
	return tenants, nil
}

func createMerchant(ctx context.Context, p *Partner, key, name, email string) (Merchant, error) {
	a := p.call(ctx, http.MethodPost, "/api/v1/management/merchants/create", key, "",
		map[string]any{"name": name, "email": email})
	m, _ := a.body["merchant"].(map[string]any)
	id, _ := m["id"].(string)
	wallet, _ := m["wallet_address"].(string)
	if a.status != http.StatusCreated || id == "" {
		return Merchant{}, errors.Join(fmt.Errorf("creating merchant %s: %d %v", email, a.status, a.body), a.err)
	}
	return Merchant{ID: id, Wallet: wallet}, nil
}
