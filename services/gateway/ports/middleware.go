package ports

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/payplat/platform/pkg/logx"
)

// requestInfo collects, while a request goes down the handler chain, what the outer middleware
// logs and counts once it comes back: the route template (known after routing) and the company
// (known after authentication).
type requestInfo struct {
	route   string
	company string
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

func requestID(ctx context.Context) string { return logx.RequestID(ctx) }

// saneRequestID is what a caller's X-Request-Id must look like to be reused.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// unmatchedRoute labels requests no route matched, so that metrics never carry raw paths.
const unmatchedRoute = "unmatched"

// instrument gives every request an id (the caller's X-Request-Id when sane, else a fresh
// UUID), echoes it in the response, and logs and counts the request when it is done.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		info := &requestInfo{route: unmatchedRoute}
		ctx := context.WithValue(logx.WithRequestID(r.Context(), id), infoKey{}, info)
		rw := &responseWriter{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(ctx)
		// Deferred so that a request aborted by a late panic is still counted and logged.
		defer func() {
			elapsed := time.Since(start)
			s.metrics.observe(info.route, r.Method, rw.status, elapsed)
			s.logRequest(r, info, rw.status, elapsed)
		}()
		next.ServeHTTP(rw, r)
	})
}

// probeRoutes are polled by orchestrators; their successes are logged at debug
// level only, so that they do not drown the access log. A 503 of /readyz is an answer, not a
// failure of the gateway (a dependency is not ready yet): the readiness handler logs the
// transitions itself, so the access log keeps it at debug too.
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true}

func (s *Server) logRequest(r *http.Request, info *requestInfo, status int, elapsed time.Duration) {
	level := slog.LevelInfo
	switch {
	case info.route == "/readyz" && status == http.StatusServiceUnavailable:
		level = slog.LevelDebug
	case status >= http.StatusInternalServerError:
		level = slog.LevelError
	case probeRoutes[info.route] && status < http.StatusBadRequest:
		level = slog.LevelDebug
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("route", info.route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
	}
	if info.company != "" {
		attrs = append(attrs, slog.String(logx.CompanyIDKey, info.company))
	}
	s.log.LogAttrs(r.Context(), level, "http request", attrs...)
}

// recordRoute runs after routing and notes the matched route's template.
func recordRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route := mux.CurrentRoute(r); route != nil {
			if tpl, err := route.GetPathTemplate(); err == nil {
				infoFrom(r.Context()).route = tpl
			}
		}
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panic into a 500 INTERNAL that reveals nothing, and logs the panic and
// its stack with the request id.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(r.Context(), "panic serving request",
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rw, ok := w.(*responseWriter); ok && rw.wroteHeader {
				// Too late for an error body; cut the response short instead.
				panic(http.ErrAbortHandler)
			}
			s.writeError(w, r, errPanic)
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps every request body at MaxBodyBytes. A declared length over the cap is refused
// at once; a body that turns out longer fails on read with *http.MaxBytesError (413).
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			s.writeError(w, r, &http.MaxBytesError{Limit: MaxBodyBytes})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// responseWriter records the status of a response.
type responseWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *responseWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
