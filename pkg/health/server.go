package health

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Server is a service's own small HTTP listener for /healthz, /readyz and /metrics.
type Server struct {
	addr string
	log  *slog.Logger
	srv  *http.Server
	mux  *http.ServeMux

	mu      sync.Mutex
	ln      net.Listener
	started bool
}

// New returns a Server for addr (HEALTH_ADDR; port 0 picks a free port, see Addr) serving
// Handlers(checks, gatherer) with failures logged to log (nil logs nothing). It does not
// listen until Start.
func New(addr string, checks map[string]Check, gatherer prometheus.Gatherer, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	healthz, readyz, metrics := Handlers(checks, gatherer, WithLogger(log))
	mux := http.NewServeMux()
	mux.Handle("/healthz", healthz)
	mux.Handle("/readyz", readyz)
	mux.Handle("/metrics", metrics)
	return &Server{
		addr: addr,
		log:  log,
		mux:  mux,
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			// Readiness takes at most a check timeout; a large /metrics page needs a little more.
			WriteTimeout: 30 * time.Second,
			IdleTimeout:  60 * time.Second,
			ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}
}

// ServeProfiles adds Go's runtime profiles under /debug/pprof/ (net/http/pprof) to the
// listener, for an operator who sets PPROF=true to see where a service's time goes. Call it
// before Start. A CPU profile may last up to the listener's 30 s write timeout
// (/debug/pprof/profile?seconds=25). The listener should then be reachable only from the
// operators' network: a profile shows the code, not data, but costs CPU while it runs.
func (s *Server) ServeProfiles() {
	s.mux.HandleFunc("/debug/pprof/", pprof.Index)
	s.mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}

// Start listens on the address and serves in the background; when it returns without error
// the listener accepts connections. A Server starts at most once.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("health: server already started")
	}
	if s.addr == "" {
		return errors.New("health: empty listen address (set HEALTH_ADDR)")
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err // already names the address: "listen tcp 127.0.0.1:9101: ..."
	}
	s.ln, s.started = ln, true
	go s.serve(ln)
	s.log.Info("health listener started", slog.String("addr", ln.Addr().String()))
	return nil
}

func (s *Server) serve(ln net.Listener) {
	if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("health listener stopped", slog.String("error", err.Error()))
	}
}

// Addr returns the address the listener is bound to once started (the real port when the
// configured one was 0), else the configured address.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return s.ln.Addr().String()
	}
	return s.addr
}

// Shutdown stops accepting connections and waits, until ctx is done, for requests in flight
// to finish. Without a prior Start it does nothing.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return nil
	}
	return s.srv.Shutdown(ctx)
}
