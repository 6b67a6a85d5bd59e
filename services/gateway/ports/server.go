// Package ports is the gateway's HTTP API: routing, authentication, idempotency, the error
// format of DESIGN §5, request logging and metrics, and one handler per file.
package ports

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/services/gateway/app"
)

// Deps is what the HTTP server needs.
type Deps struct {
	// App is every use case the handlers call.
	App         app.Application
	Idempotency IdempotencyRepository
	Logger      *slog.Logger
	// Registry receives the HTTP metrics; the health listener's /metrics exposes it.
	Registry *prometheus.Registry
	// Checks are the readiness checks of /readyz, by name.
	Checks map[string]health.Check
	// AdminToken and CronSecret guard the admin and cron routes; when empty, those routes refuse
	// every request.
	AdminToken string
	CronSecret string
	// RequestTimeout bounds a request that holds an Idempotency-Key (DefaultRequestTimeout
	// when zero), so that the key's lease outlives it.
	RequestTimeout time.Duration
	// RateLimits are the token buckets per API key and route class, and per client address for
	// unauthenticated calls; the zero value limits nothing.
	RateLimits RateLimits
}

// DefaultRequestTimeout is Deps.RequestTimeout when unset.
const DefaultRequestTimeout = 30 * time.Second

// Server is the gateway's HTTP handler.
type Server struct {
	app     app.Application
	idem    IdempotencyRepository
	log     *slog.Logger
	admin   bearerSecret
	cron    bearerSecret
	router  *mux.Router
	metrics *httpMetrics
	handler http.Handler
	// requestTimeout bounds a request that holds an Idempotency-Key.
	requestTimeout time.Duration
	// limits are the rate limits (ports/ratelimit.go).
	limits *limiter
	// access is who may call each route ("METHOD path"), for Routes.
	access map[string]Access
	// query is the query parameters each route takes ("METHOD path"), for Routes.
	query map[string][]string
}

// NewServer builds the router with every route of the gateway.
func NewServer(d Deps) (*Server, error) {
	if d.Logger == nil || d.Registry == nil || d.Idempotency == nil {
		return nil, errors.New("ports: Logger, Registry and Idempotency are required")
	}
	m, err := newHTTPMetrics(d.Registry)
	if err != nil {
		return nil, err
	}
	s := &Server{
		app:     d.App,
		idem:    d.Idempotency,
		log:     d.Logger,
		admin:   newBearerSecret(d.AdminToken),
		cron:    newBearerSecret(d.CronSecret),
		router:  mux.NewRouter(),
		metrics: m,

		requestTimeout: d.RequestTimeout,
		limits:         newLimiter(d.RateLimits),
		access:         map[string]Access{},
		query:          map[string][]string{},
	}
	if s.requestTimeout <= 0 {
		s.requestTimeout = DefaultRequestTimeout
	}
	s.router.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errRouteNotFound)
	})
	s.router.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errMethodNotAllowed)
	})
	// A path that is not clean ("..", "//") names no route: answered 404 like any unknown
	// path, rather than redirected to another route (gorilla/mux's default), which an API
	// client would follow with its credentials.
	s.router.SkipClean(true)
	s.router.Use(recordRoute)
	s.handler = s.instrument(s.recoverPanics(s.limitBody(s.router)))
	s.routes(d)
	return s, nil
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Handle registers h for method and path (a gorilla/mux template) behind access, taking the
// query parameters named by query and no other (strictQuery). Every route declares who may call
// it; POST routes also honour Idempotency-Key.
func (s *Server) Handle(method, path string, h http.Handler, access Access, query ...string) {
	if method == http.MethodPost {
		h = s.idempotent(h)
	}
	s.access[method+" "+path] = access
	s.query[method+" "+path] = query
	s.router.Handle(path, s.guard(access, classOf(method, path), s.strictQuery(query, h))).Methods(method)
}

// A HandlerFunc serves an API request and returns the error to answer with, if any; the server
// writes it in the documented shape (writeError), so a handler says only what went wrong.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// HandleFunc is Handle for an API handler that returns its error.
func (s *Server) HandleFunc(method, path string, h HandlerFunc, access Access, query ...string) {
	s.Handle(method, path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}), access, query...)
}
