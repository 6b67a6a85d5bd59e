// Package health serves the liveness, readiness and metrics endpoints of DESIGN.md §6: every
// service runs a Server on its own small listener, and the gateway mounts the same Handlers on
// its API router.
//
//   - /healthz answers 200 {"status":"ok"} while the process serves HTTP at all.
//   - /readyz runs every Check concurrently, each with its own timeout (2s), and answers
//     200 {"status":"ready","checks":{"db":"ok",...}} or
//     503 {"status":"not_ready","checks":{"db":"error: database unreachable",...}}. It logs
//     transitions (info) and checks failing past a bound (warn), not every failed probe.
//   - /metrics is the Prometheus exposition of a gatherer.
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check reports whether one dependency is usable, returning nil when it is. It should return
// promptly when ctx is done. Its error message is shown in the /readyz body, so it must be
// short and free of secrets such as connection strings; keep details in a wrapped cause (the
// ready-made checks do), which is only logged.
type Check func(ctx context.Context) error

// DefaultCheckTimeout bounds each check of /readyz unless WithCheckTimeout says otherwise.
const DefaultCheckTimeout = 2 * time.Second

// maxMessage bounds how much of a check's error message /readyz shows, in case a check
// forgets to keep it short.
const maxMessage = 120

// Option adjusts Handlers.
type Option func(*options)

type options struct {
	log       *slog.Logger
	timeout   time.Duration
	warnAfter time.Duration
}

// DefaultWarnAfter is how long a readiness check may keep failing before /readyz warns about
// it, unless WithWarnAfter says otherwise: long enough for a service to provision its streams
// and for the dependencies started beside it to come up.
const DefaultWarnAfter = 30 * time.Second

// WithLogger makes /readyz log readiness transitions (a check starting to fail, with its full
// cause, and passing again) at info level, and a check still failing after the WithWarnAfter
// bound at warn level, once; /metrics logs gathering errors. Without it nothing is logged.
func WithLogger(log *slog.Logger) Option {
	return func(o *options) {
		if log != nil {
			o.log = log
		}
	}
}

// WithWarnAfter sets how long a check may fail before /readyz logs a warning
// (DefaultWarnAfter unless set); a non-positive d warns at the first failure.
func WithWarnAfter(d time.Duration) Option {
	return func(o *options) { o.warnAfter = max(d, 0) }
}

// WithCheckTimeout sets how long each /readyz check may take (DefaultCheckTimeout unless
// set); a non-positive d is ignored.
func WithCheckTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// Handlers returns the /healthz, /readyz and /metrics handlers. checks maps the names shown in
// the /readyz body to their checks; the map is copied. A nil gatherer means
// prometheus.DefaultGatherer. The handlers answer GET and HEAD, and 405 otherwise.
func Handlers(checks map[string]Check, gatherer prometheus.Gatherer, opts ...Option) (healthz, readyz, metrics http.Handler) {
	o := options{log: slog.New(slog.DiscardHandler), timeout: DefaultCheckTimeout, warnAfter: DefaultWarnAfter}
	for _, opt := range opts {
		opt(&o)
	}
	if gatherer == nil {
		gatherer = prometheus.DefaultGatherer
	}
	copied := make(map[string]Check, len(checks))
	for name, check := range checks {
		copied[name] = check
	}
	healthz = readOnly(http.HandlerFunc(serveHealthz))
	readyz = readOnly(&readyHandler{checks: copied, timeout: o.timeout, log: o.log, warnAfter: o.warnAfter,
		failing: map[string]*failingRun{}})
	metrics = readOnly(promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(o.log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return healthz, readyz, metrics
}

// readyBody is the JSON answer of /readyz.
type readyBody struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

func serveHealthz(w http.ResponseWriter, _ *http.Request) {
	writeRaw(w, http.StatusOK, `{"status":"ok"}`)
}

type readyHandler struct {
	checks    map[string]Check
	timeout   time.Duration
	log       *slog.Logger
	warnAfter time.Duration

	mu      sync.Mutex
	failing map[string]*failingRun // checks failing since their last pass, by name
}

// failingRun is a check's current run of failures.
type failingRun struct {
	since  time.Time
	warned bool
}

func (h *readyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	errs := runChecks(r.Context(), h.checks, h.timeout)
	// A non-nil map, so that no checks still answer "checks":{}.
	res := readyBody{Status: "ready", Checks: make(map[string]string, len(errs))}
	status := http.StatusOK
	for name, err := range errs {
		if err == nil {
			res.Checks[name] = "ok"
			continue
		}
		res.Status, status = "not_ready", http.StatusServiceUnavailable
		res.Checks[name] = "error: " + shortMessage(err)
	}
	h.logTransitions(r.Context(), errs)
	writeJSON(w, status, res)
}

// logTransitions logs what changed since the last /readyz: a check that starts failing (info,
// with its cause), one that passes again (info), and one failing for longer than warnAfter
// (warn, once per run of failures). A service that is still provisioning at start, or waiting
// for a dependency started beside it, is normal and logs no warning; one whose dependency stays
// missing does.
func (h *readyHandler) logTransitions(ctx context.Context, errs map[string]error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	for name, err := range errs {
		f := h.failing[name]
		switch {
		case err == nil && f != nil:
			delete(h.failing, name)
			h.log.InfoContext(ctx, "readiness check passing", "check", name, "failed_for", now.Sub(f.since).Round(time.Millisecond).String())
		case err == nil:
		case f == nil:
			f = &failingRun{since: now}
			h.failing[name] = f
			h.log.InfoContext(ctx, "readiness check failing", failureAttrs(name, err, 0)...)
		}
		if err != nil && !f.warned && now.Sub(f.since) >= h.warnAfter {
			f.warned = true
			h.log.WarnContext(ctx, "readiness check still failing", failureAttrs(name, err, now.Sub(f.since))...)
		}
	}
}

func failureAttrs(name string, err error, failedFor time.Duration) []any {
	attrs := []any{slog.String("check", name), slog.String("error", err.Error())}
	if cause := errors.Unwrap(err); cause != nil {
		attrs = append(attrs, slog.String("cause", cause.Error()))
	}
	if failedFor > 0 {
		attrs = append(attrs, slog.String("failed_for", failedFor.Round(time.Millisecond).String()))
	}
	return attrs
}

// shortMessage returns the first line of err's message, at most maxMessage bytes.
func shortMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > maxMessage {
		n := maxMessage
		for n > 0 && !utf8.RuneStart(msg[n]) {
			n--
		}
		msg = msg[:n] + "..."
	}
	return msg
}

// readOnly answers 405 to anything but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeRaw(w, http.StatusMethodNotAllowed, `{"status":"method_not_allowed"}`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v readyBody) {
	data, err := json.Marshal(v)
	if err != nil {
		// A struct of strings always marshals; keep the handler total anyway.
		data = []byte(`{"status":"not_ready","checks":{}}`)
		status = http.StatusInternalServerError
	}
	writeRaw(w, status, string(data))
}

func writeRaw(w http.ResponseWriter, status int, data string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(data + "\n"))
}

// runChecks runs every check concurrently and returns each one's result.
func runChecks(ctx context.Context, checks map[string]Check, timeout time.Duration) map[string]error {
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out = make(map[string]error, len(checks))
	)
	for name, check := range checks {
		wg.Go(func() {
			err := runCheck(ctx, check, timeout)
			mu.Lock()
			out[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// runCheck runs one check with its own deadline. A check that ignores its context is
// abandoned at the deadline (its goroutine finishes on its own) so /readyz always answers.
func runCheck(ctx context.Context, check Check, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- failure("panic", fmt.Errorf("check panicked: %v", p))
			}
		}()
		done <- check(ctx)
	}()
	select {
	case err := <-done:
		if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return failure("timeout", err)
		}
		return err
	case <-ctx.Done():
		return failure("timeout", fmt.Errorf("check did not return within %s", timeout))
	}
}
