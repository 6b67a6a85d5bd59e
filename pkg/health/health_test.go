package health_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/health"
)

func ok(context.Context) error { return nil }

func failing(msg string) health.Check {
	return func(context.Context) error { return errors.New(msg) }
}

type readyBody struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// get fetches url and returns the status code and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", url, err)
	}
	return resp.StatusCode, string(data)
}

// startServer runs a Server on a free loopback port until the test ends.
func startServer(t *testing.T, checks map[string]health.Check, gatherer prometheus.Gatherer, log *slog.Logger) string {
	t.Helper()
	s := health.New("127.0.0.1:0", checks, gatherer, log)
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		// A connection the client dialed but never used counts as busy for the server's first
		// 5 seconds (net/http's rule for new connections): close the client's idle ones, and
		// give Shutdown more than those 5 seconds.
		http.DefaultClient.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return "http://" + s.Addr()
}

func TestHealthzAnswersOKEvenWhenAReadinessCheckFails(t *testing.T) {
	t.Parallel()
	base := startServer(t, map[string]health.Check{"db": failing("down")}, prometheus.NewRegistry(), nil)
	code, body := get(t, base+"/healthz")
	if code != http.StatusOK || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Fatalf("GET /healthz = %d %s", code, body)
	}
}

func TestReadyzIsReadyOnlyWhenEveryCheckPassesAndReportsEach(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		checks     map[string]health.Check
		wantCode   int
		wantStatus string
		wantChecks map[string]string
	}{
		{
			name:       "no checks",
			checks:     nil,
			wantCode:   http.StatusOK,
			wantStatus: "ready",
			wantChecks: map[string]string{},
		},
		{
			name:       "all ok",
			checks:     map[string]health.Check{"db": ok, "nats": ok, "streams": ok},
			wantCode:   http.StatusOK,
			wantStatus: "ready",
			wantChecks: map[string]string{"db": "ok", "nats": "ok", "streams": "ok"},
		},
		{
			name:       "one failing",
			checks:     map[string]health.Check{"db": failing("database unreachable"), "nats": ok},
			wantCode:   http.StatusServiceUnavailable,
			wantStatus: "not_ready",
			wantChecks: map[string]string{"db": "error: database unreachable", "nats": "ok"},
		},
		{
			name:       "all failing",
			checks:     map[string]health.Check{"db": failing("a"), "nats": failing("b")},
			wantCode:   http.StatusServiceUnavailable,
			wantStatus: "not_ready",
			wantChecks: map[string]string{"db": "error: a", "nats": "error: b"},
		},
		{
			name:       "long and multi-line message is cut",
			checks:     map[string]health.Check{"db": failing("first line\npassword=secret"), "x": failing(strings.Repeat("x", 500))},
			wantCode:   http.StatusServiceUnavailable,
			wantStatus: "not_ready",
			wantChecks: map[string]string{"db": "error: first line", "x": "error: " + strings.Repeat("x", 120) + "..."},
		},
		{
			name:       "panicking check",
			checks:     map[string]health.Check{"db": func(context.Context) error { panic("boom") }},
			wantCode:   http.StatusServiceUnavailable,
			wantStatus: "not_ready",
			wantChecks: map[string]string{"db": "error: panic"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := startServer(t, tt.checks, prometheus.NewRegistry(), nil)
			code, body := get(t, base+"/readyz")
			var got readyBody
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("decoding %q: %v", body, err)
			}
			if code != tt.wantCode || got.Status != tt.wantStatus || !equalMaps(got.Checks, tt.wantChecks) || got.Checks == nil {
				t.Fatalf("GET /readyz = %d %s; want %d %s %v", code, body, tt.wantCode, tt.wantStatus, tt.wantChecks)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestReadyzRunsChecksConcurrently has two checks that each wait for the other to start: run
// one after the other, both would time out.
func TestReadyzRunsChecksConcurrently(t *testing.T) {
	t.Parallel()
	aStarted, bStarted := make(chan struct{}), make(chan struct{})
	wait := func(mine, other chan struct{}) health.Check {
		return func(ctx context.Context) error {
			close(mine)
			select {
			case <-other:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	base := startServer(t, map[string]health.Check{"a": wait(aStarted, bStarted), "b": wait(bStarted, aStarted)}, prometheus.NewRegistry(), nil)
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("GET /readyz = %d %s", code, body)
	}
}

func TestReadyzTimesOutSlowChecksEvenThoseIgnoringTheirContext(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	checks := map[string]health.Check{
		// Honours its context: reports the deadline.
		"polite": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		// Ignores its context: abandoned at the deadline.
		"stuck": func(context.Context) error { <-release; return nil },
		"fast":  ok,
	}
	_, readyz, _ := health.Handlers(checks, prometheus.NewRegistry(), health.WithCheckTimeout(50*time.Millisecond))
	srv := httptest.NewServer(readyz)
	defer srv.Close()

	start := time.Now()
	code, body := get(t, srv.URL)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("readyz took %s", elapsed)
	}
	var got readyBody
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"polite": "error: timeout", "stuck": "error: timeout", "fast": "ok"}
	if code != http.StatusServiceUnavailable || !equalMaps(got.Checks, want) {
		t.Fatalf("readyz = %d %s, want 503 %v", code, body, want)
	}
}

func TestReadyzLogsTheCauseOfAFailureButKeepsItOutOfTheBody(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	check := health.PostgresCheck(pingerFunc(func(context.Context) error {
		return errors.New("dial tcp 10.0.0.7:5432: connection refused")
	}))
	_, readyz, _ := health.Handlers(map[string]health.Check{"db": check}, nil, health.WithLogger(log))
	rec := httptest.NewRecorder()
	readyz.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if strings.Contains(rec.Body.String(), "10.0.0.7") {
		t.Fatalf("readyz body leaks the cause: %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "10.0.0.7") || !strings.Contains(logs.String(), `"check":"db"`) {
		t.Fatalf("cause not logged: %s", logs.String())
	}
}

// /readyz logs a check's transitions once each, at info, however often it is polled, and warns
// only when a check keeps failing past the bound: a service waiting for its dependencies at
// start is normal, not alarming.
func TestReadyzLogsTransitionsOnceAndWarnsOnlyPastTheBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		warnAfter time.Duration
		wantWarn  int
	}{{"within the bound", time.Hour, 0}, {"past the bound", 0, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			var down atomic.Bool
			down.Store(true)
			check := func(context.Context) error {
				if down.Load() {
					return errors.New("missing streams: PAYMENTS")
				}
				return nil
			}
			_, readyz, _ := health.Handlers(map[string]health.Check{"streams": check}, nil,
				health.WithLogger(log), health.WithWarnAfter(tc.warnAfter))
			poll := func(want int) {
				rec := httptest.NewRecorder()
				readyz.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				if rec.Code != want {
					t.Fatalf("readyz = %d, want %d", rec.Code, want)
				}
			}
			for range 5 {
				poll(http.StatusServiceUnavailable)
			}
			down.Store(false)
			poll(http.StatusOK)
			poll(http.StatusOK)
			counts := map[string]int{}
			for line := range strings.Lines(logs.String()) {
				var rec struct{ Level, Msg string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				counts[rec.Level+" "+rec.Msg]++
			}
			want := map[string]int{"INFO readiness check failing": 1, "INFO readiness check passing": 1}
			if tc.wantWarn > 0 {
				want["WARN readiness check still failing"] = tc.wantWarn
			}
			if !maps.Equal(counts, want) {
				t.Fatalf("log lines %v, want %v\n%s", counts, want, logs.String())
			}
		})
	}
}

func TestMetricsServesWhatTheRegistryGathers(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	counter := prometheus.NewCounter(prometheus.CounterOpts{Name: "payplat_test_events_total", Help: "Test events."})
	reg.MustRegister(counter)
	counter.Add(3)
	base := startServer(t, nil, reg, nil)
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, "payplat_test_events_total 3") {
		t.Fatalf("GET /metrics = %d:\n%s", code, body)
	}
}

func TestOnlyGETAndHEADAreAllowedAndUnknownPathsAreNotFound(t *testing.T) {
	t.Parallel()
	base := startServer(t, nil, prometheus.NewRegistry(), nil)
	tests := []struct {
		method, path string
		want         int
	}{
		{method: http.MethodPost, path: "/healthz", want: http.StatusMethodNotAllowed},
		{method: http.MethodDelete, path: "/readyz", want: http.StatusMethodNotAllowed},
		{method: http.MethodPut, path: "/metrics", want: http.StatusMethodNotAllowed},
		{method: http.MethodHead, path: "/readyz", want: http.StatusOK},
		{method: http.MethodGet, path: "/nope", want: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tt.method, base+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
			}
		})
	}
}

func TestAServerStartsOnceServesAndStopsListeningAtShutdown(t *testing.T) {
	t.Parallel()
	s := health.New("127.0.0.1:0", nil, nil, nil)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown before Start: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	addr := s.Addr()
	if strings.HasSuffix(addr, ":0") {
		t.Fatalf("Addr() = %s, want the bound port", addr)
	}
	if err := s.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	if code, _ := get(t, "http://"+addr+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz = %d", code)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("listener still answers after Shutdown")
	}
}

func TestStartFailsOnAnEmptyTakenOrBadAddress(t *testing.T) {
	t.Parallel()
	taken := health.New("127.0.0.1:0", nil, nil, nil)
	if err := taken.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taken.Shutdown(context.Background()) })
	tests := []struct {
		name, addr string
	}{
		{name: "empty address", addr: ""},
		{name: "port in use", addr: taken.Addr()},
		{name: "bad address", addr: "not an address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := health.New(tt.addr, nil, nil, nil).Start(); err == nil {
				t.Fatalf("Start(%q) succeeded", tt.addr)
			}
		})
	}
}

func TestProfilesAreServedOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, profiles := range []bool{false, true} {
		t.Run(fmt.Sprintf("profiles=%v", profiles), func(t *testing.T) {
			t.Parallel()
			s := health.New("127.0.0.1:0", nil, nil, nil)
			if profiles {
				s.ServeProfiles()
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			want := http.StatusNotFound
			if profiles {
				want = http.StatusOK
			}
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
				if code, _ := get(t, "http://"+s.Addr()+path); code != want {
					t.Errorf("GET %s = %d, want %d", path, code, want)
				}
			}
		})
	}
}
