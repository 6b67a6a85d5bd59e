// Package dashboard is the partners' web UI (issue 18), served by the gateway under /dashboard/:
// server-rendered html/template pages with one small script, assets embedded in the binary.
//
// A person signs in with a secret key, which is exchanged for a server-side session at once and
// never kept by the browser. Every page reads and writes through the same services and use cases
// as the API (package ports), so a form is validated, refused and de-duplicated exactly as the
// matching API request would be; bad input shows the API's message beside its field. Live
// updates arrive by Server-Sent Events fed from JetStream for the signed-in company and
// environment only (events.go).
package dashboard

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// Prefix is where the dashboard is served.
const Prefix = "/dashboard"

// Config tunes the dashboard; service.Config loads it from the environment.
type Config struct {
	// SessionIdle ends a session unused for this long (DASHBOARD_SESSION_IDLE, default 12h).
	SessionIdle time.Duration
	// MaxStreams bounds the live-update connections one gateway holds open
	// (DASHBOARD_MAX_STREAMS, default 500); past it a page works without live updates.
	MaxStreams int
	// Heartbeat is how often an idle live-update connection gets a comment line, which keeps
	// proxies from closing it and re-checks the session (DASHBOARD_SSE_HEARTBEAT, default 15s).
	Heartbeat time.Duration
	// APIReferenceURL is where the developers page links for the API reference; empty links
	// to the reference page the dashboard serves itself.
	APIReferenceURL string
}

func (c Config) withDefaults() Config {
	if c.SessionIdle <= 0 {
		c.SessionIdle = 12 * time.Hour
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = 500
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.APIReferenceURL == "" {
		c.APIReferenceURL = Prefix + "/developers/api"
	}
	return c
}

// Authenticator turns a presented API key into its principal, as the API's authentication does
// (query.AuthenticateHandler).
type Authenticator interface {
	Handle(ctx context.Context, raw string) (domain.Principal, error)
}

// Sessions stores sessions by the SHA-256 of their token (adapters.DashboardSessions).
type Sessions interface {
	Create(ctx context.Context, tokenHash []byte, keyID uuid.UUID) error
	// Find returns the session and marks it used; domain.ErrSessionNotFound, ErrSessionExpired
	// or ErrSessionKeyRevoked when it cannot be used.
	Find(ctx context.Context, tokenHash []byte, idle time.Duration) (domain.DashboardSession, error)
	// Check is Find without marking the session used.
	Check(ctx context.Context, tokenHash []byte, idle time.Duration) (domain.DashboardSession, error)
	Delete(ctx context.Context, tokenHash []byte) error
	DeleteIdle(ctx context.Context, idle time.Duration) (int64, error)
	ActiveKeys(ctx context.Context, company uuid.UUID) ([]domain.MaskedKey, error)
}

// Merchants is the API's merchant service plus the dashboard's paged reads (adapters.Merchants).
type Merchants interface {
	ports.MerchantService
	Page(ctx context.Context, p domain.Principal, limit, offset int) ([]domain.DashboardMerchant, bool, error)
	Count(ctx context.Context, p domain.Principal) (int, error)
	Get(ctx context.Context, p domain.Principal, merchantID string) (domain.DashboardMerchant, error)
	LedgerPage(ctx context.Context, p domain.Principal, merchantID string, limit, offset int) (domain.MerchantLedger, error)
}

// Payments is the API's payment service plus one payment by id (adapters.Payments).
type Payments interface {
	ports.PaymentService
	Get(ctx context.Context, p domain.Principal, paymentID string) (domain.Payment, error)
}

// Webhooks is the API's webhook service plus the dashboard's reads (adapters.Webhooks).
type Webhooks interface {
	ports.WebhookService
	Endpoint(ctx context.Context, p domain.Principal) (domain.WebhookEndpoint, bool, error)
	Delivery(ctx context.Context, p domain.Principal, id string) (domain.WebhookDelivery, error)
	LogPage(ctx context.Context, p domain.Principal, status string, after *domain.WebhookLogCursor,
		limit int) ([]domain.WebhookLogEntry, *domain.WebhookLogCursor, error)
	Health(ctx context.Context, p domain.Principal) (domain.WebhookHealth, error)
}

// LiveFeed delivers what happens to one company in one environment while ctx lasts
// (adapters.LiveEvents): payment and pool events from JetStream, webhook outcomes, and the
// rolls of the company's keys. The channel closes when ctx ends or the feed fails.
type LiveFeed interface {
	Subscribe(ctx context.Context, p domain.Principal) (<-chan domain.LiveEvent, error)
}

// Idempotency runs a handler under the API's Idempotency-Key rules (*ports.Server).
type Idempotency interface {
	Idempotent(h http.Handler) http.Handler
}

// Deps is what the dashboard needs.
type Deps struct {
	Config    Config
	Log       *slog.Logger
	Keys      Authenticator
	Sessions  Sessions
	Merchants Merchants
	Pool      ports.PoolService
	Payments  Payments
	Webhooks  Webhooks
	// Live may be nil: pages then work without live updates.
	Live LiveFeed
	API  Idempotency
}

// Dashboard serves the dashboard's pages, assets and live updates.
type Dashboard struct {
	Deps
	cfg     Config
	mux     *http.ServeMux
	pages   map[string]*template.Template
	streams chan struct{}
	// closing ends the live-update connections on shutdown; closeOnce guards it.
	closing   chan struct{}
	closeOnce sync.Once
}

// New builds the dashboard.
func New(d Deps) (*Dashboard, error) {
	if d.Log == nil || d.Keys == nil || d.Sessions == nil || d.Merchants == nil || d.Pool == nil ||
		d.Payments == nil || d.Webhooks == nil || d.API == nil {
		return nil, errors.New("dashboard: every dependency but Live is required")
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	cfg := d.Config.withDefaults()
	db := &Dashboard{Deps: d, cfg: cfg, mux: http.NewServeMux(), pages: pages,
		streams: make(chan struct{}, cfg.MaxStreams), closing: make(chan struct{})}
	db.routes()
	return db, nil
}

// ServeHTTP serves a request under Prefix, with the dashboard's security headers.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	d.mux.ServeHTTP(w, r)
}

// Close ends every live-update connection (the gateway's shutdown calls it, so that open
// dashboards do not hold the shutdown up until its timeout).
func (d *Dashboard) Close() {
	d.closeOnce.Do(func() { close(d.closing) })
}

// routes registers every page. GETs read; POSTs change something and carry the session's CSRF
// token and an Idempotency-Key from their form.
func (d *Dashboard) routes() {
	d.mux.HandleFunc("GET "+Prefix+"/static/{file}", serveStatic)
	d.mux.HandleFunc("GET "+Prefix, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
	})
	d.mux.HandleFunc("GET "+Prefix+"/signin", d.signInPage)
	d.mux.HandleFunc("POST "+Prefix+"/signin", d.signIn)
	d.mux.HandleFunc("POST "+Prefix+"/signout", d.post(d.signOut))

	d.mux.HandleFunc("GET "+Prefix+"/{$}", d.page(d.overview))
	d.mux.HandleFunc("GET "+Prefix+"/merchants", d.page(d.merchants))
	d.mux.HandleFunc("POST "+Prefix+"/merchants", d.post(d.createMerchant))
	d.mux.HandleFunc("GET "+Prefix+"/merchants/{id}", d.page(d.merchant))
	d.mux.HandleFunc("POST "+Prefix+"/merchants/{id}/status", d.post(d.setMerchantStatus))
	d.mux.HandleFunc("GET "+Prefix+"/pool", d.page(d.pool))
	d.mux.HandleFunc("POST "+Prefix+"/pool/settings", d.post(d.updatePoolSettings))
	d.mux.HandleFunc("POST "+Prefix+"/pool/deposits", d.post(d.simulateDeposit))
	d.mux.HandleFunc("GET "+Prefix+"/payments", d.page(d.payments))
	d.mux.HandleFunc("POST "+Prefix+"/payments", d.post(d.simulatePayment))
	d.mux.HandleFunc("GET "+Prefix+"/payments/{id}", d.page(d.payment))
	d.mux.HandleFunc("GET "+Prefix+"/webhooks", d.page(d.webhooks))
	d.mux.HandleFunc("POST "+Prefix+"/webhooks/config", d.post(d.configureWebhooks))
	d.mux.HandleFunc("POST "+Prefix+"/webhooks/secret", d.post(d.rollWebhookSecret))
	d.mux.HandleFunc("GET "+Prefix+"/webhooks/deliveries/{id}", d.page(d.delivery))
	d.mux.HandleFunc("POST "+Prefix+"/webhooks/deliveries/{id}/retry", d.post(d.retryDelivery))
	d.mux.HandleFunc("GET "+Prefix+"/developers", d.page(d.developers))
	d.mux.HandleFunc("GET "+Prefix+"/developers/api", d.page(d.apiReference))
	d.mux.HandleFunc("GET "+Prefix+"/events", d.events)
	d.mux.HandleFunc(Prefix+"/", d.notFound)
}

// securityHeaders: no inline script or style anywhere (the CSP allows only the dashboard's own
// files), no framing (clickjacking), no MIME sniffing, no referrer leaving the dashboard, and no
// caching of pages that hold a company's data.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	h.Set("Cache-Control", "no-store")
}
