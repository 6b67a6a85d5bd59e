package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/api/apitest"
	"github.com/payplat/platform/pkg/logx"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/ports"
	"github.com/payplat/platform/services/gateway/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// The secrets of the tests' gateways (at least service.MinSecretBytes each).
const (
	testAdminToken        = "admin-secret-0123456789abcdef0123456789"
	testIdempotencySecret = "test-idempotency-secret-0123456789abcdef"
)

func TestConfigDefaultsApplyAndBadDurationsAreRefused(t *testing.T) {
	t.Parallel()
	cfg, err := service.LoadFrom(map[string]string{"DATABASE_URL": "postgres://x", "NATS_URL": "nats://y",
		"IDEMPOTENCY_SECRET": testIdempotencySecret})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:8080" || cfg.HealthAddr != "127.0.0.1:8085" || cfg.ShutdownTimeout != 15*time.Second ||
		cfg.AdminToken != "" ||
		cfg.DatabaseURL != "postgres://x" || cfg.NATSURL != "nats://y" || cfg.IdempotencyRetention != 24*time.Hour {
		t.Errorf("config = %+v", cfg)
	}
	if cfg.PublishTimeout != 2*time.Second || cfg.StatementTimeout != 10*time.Second {
		t.Errorf("publish timeout %v, statement timeout %v, want 2s and 10s", cfg.PublishTimeout, cfg.StatementTimeout)
	}
	for _, bad := range []map[string]string{{"GATEWAY_PUBLISH_TIMEOUT": "0s"}, {"GATEWAY_STATEMENT_TIMEOUT": "-1s"}} {
		bad["IDEMPOTENCY_SECRET"] = testIdempotencySecret
		if _, err := service.LoadFrom(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := service.LoadFrom(map[string]string{"SHUTDOWN_TIMEOUT": "soon"}); err == nil ||
		!strings.Contains(err.Error(), "SHUTDOWN_TIMEOUT") {
		t.Errorf("bad duration: %v", err)
	}
}

func TestNewRequiresDatabaseAndNATS(t *testing.T) {
	t.Parallel()
	if _, err := service.New(t.Context(), service.Config{}); err == nil {
		t.Fatal("New without DATABASE_URL and NATS_URL succeeded")
	}
}

func testConfig(t *testing.T) service.Config {
	t.Helper()
	cfg, err := service.LoadFrom(map[string]string{
		"DATABASE_URL":       testkit.NewDatabase(t, migrations.Set()),
		"NATS_URL":           testkit.NATS(t),
		"GATEWAY_ADDR":       "127.0.0.1:0",
		"ADMIN_TOKEN":        testAdminToken,
		"IDEMPOTENCY_SECRET": testIdempotencySecret,
		"HEALTH_ADDR":        "127.0.0.1:0",
		"SHUTDOWN_TIMEOUT":   "10s",
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// assertStreamsProvisioned checks that every stream of the bus (DESIGN §3, dead letters
// included) exists: the gateway provisions them at start like every service.
func assertStreamsProvisioned(t *testing.T, natsURL string) {
	t.Helper()
	_, js := testkit.JetStream(t, natsURL)
	want := []string{"MERCHANTS", "POOL", "PAYMENTS", "TREASURY", "MERCHANT_WALLETS", "DEVICES", "SESSION_KEYS", "DEADLETTER"}
	for _, name := range want {
		if _, err := js.Stream(t.Context(), name); err != nil {
			t.Errorf("stream %s: %v", name, err)
		}
	}
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	return getWith(t, contractClient(t), url, header...)
}

// getWith is get with another client: the health listener is not the API the document describes.
func getWith(t *testing.T, client *http.Client, url string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The service runs in process on a random port against real PostgreSQL and NATS, serves its
// API and health endpoints, and shuts down gracefully: a request in flight when the context
// ends still gets its answer, and Run returns nil.
func TestServiceRunsAndShutsDownGracefully(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	svc := newGateway(t, cfg)
	entered, release := make(chan struct{}), make(chan struct{})
	svc.API().HandleFunc(http.MethodGet, "/test/slow", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-release
		_, err := w.Write([]byte("done"))
		return err
	}, ports.Public)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()

	testkit.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if status, body := get(t, svc.URL()+"/readyz"); status != http.StatusOK {
			return errors.New(body)
		}
		return nil
	})
	if status, _ := get(t, svc.URL()+"/healthz"); status != http.StatusOK {
		t.Errorf("healthz: %d", status)
	}
	// The metrics are on the health listener only, never on the public API (issue 16); the
	// health listener answers the probes too.
	if status, body := get(t, svc.URL()+"/metrics"); status != http.StatusNotFound {
		t.Errorf("the API listener serves /metrics: %d %.100s", status, body)
	}
	health := "http://" + svc.HealthAddr()
	if status, body := getWith(t, http.DefaultClient, health+"/metrics"); status != http.StatusOK ||
		!strings.Contains(body, `http_requests_total{code="200",method="GET",route="/readyz"}`) {
		t.Errorf("health listener /metrics: %d %.300s", status, body)
	}
	for _, probe := range []string{"/healthz", "/readyz"} {
		if status, body := getWith(t, http.DefaultClient, health+probe); status != http.StatusOK {
			t.Errorf("health listener %s: %d %s", probe, status, body)
		}
	}
	assertStreamsProvisioned(t, cfg.NATSURL)
	if status, body := get(t, svc.URL()+"/api/v1/admin/companies", "Authorization", "Bearer "+testAdminToken); status != 200 ||
		body != "{\"companies\":[]}\n" {
		t.Errorf("companies: %d %s", status, body)
	}

	slow := make(chan string, 1)
	go func() {
		resp, err := http.Get(svc.URL() + "/test/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slow <- string(b)
	}()
	<-entered
	cancel()
	testkit.WaitFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		resp, err := http.Get(svc.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
			return errors.New("still accepting connections")
		}
		return nil
	})
	close(release)
	if got := <-slow; got != "done" {
		t.Errorf("request in flight at shutdown got %q", got)
	}
	if err := testkit.Receive(t, ran, 15*time.Second, "return of Run"); err != nil {
		t.Errorf("Run = %v", err)
	}
}

// The gateway starts while NATS is down (it reconnects forever) and reports not ready.
func TestServiceStartsWithoutNATS(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.NATSURL = "nats://127.0.0.1:1"
	svc := newGateway(t, cfg)
	stop := testkit.RunInBackground(svc.Run)
	defer func() { _ = stop() }()
	testkit.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		resp, err := http.Get(svc.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	if status, body := get(t, svc.URL()+"/readyz"); status != http.StatusServiceUnavailable || !strings.Contains(body, "nats") {
		t.Errorf("readyz without NATS: %d %s", status, body)
	}
}

// newGateway builds a gateway on cfg that logs only errors, and nowhere: the tests read its
// answers, not its log.
func newGateway(t *testing.T, cfg service.Config) *service.Service {
	t.Helper()
	svc, err := service.New(t.Context(), cfg, service.WithLogger(logx.New("text", "error", io.Discard)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// startGateway runs a gateway on cfg until the test ends and returns its URL once it is ready.
func startGateway(t *testing.T, cfg service.Config) string {
	t.Helper()
	svc := newGateway(t, cfg)
	stop := testkit.RunInBackground(svc.Run)
	t.Cleanup(func() { _ = stop() })
	testkit.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if status, body := get(t, svc.URL()+"/readyz"); status != http.StatusOK {
			return errors.New(body)
		}
		return nil
	})
	return svc.URL()
}

// Two gateways on one database and one NATS server, each remembering API keys for an hour: a
// key rolled through one is refused by the other too, as soon as the announcement arrives,
// long before the TTL.
func TestRolledKeyRefusedByEveryGateway(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.KeyCacheTTL = time.Hour
	a, b := startGateway(t, cfg), startGateway(t, cfg)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, a+"/api/v1/admin/companies",
		strings.NewReader(`{"name":"Acme"}`))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := contractClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Company struct {
			ID string `json:"id"`
		} `json:"company"`
		Keys map[string]string `json:"keys"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create company: %d %v", resp.StatusCode, err)
	}
	key := created.Keys["sk_test"]
	for _, url := range []string{a, b, a, b} {
		if status, body := get(t, url+"/api/v1/management/whoami", "X-Api-Key", key); status != http.StatusOK {
			t.Fatalf("whoami on %s before the roll: %d %s", url, status, body)
		}
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost,
		a+"/api/v1/admin/companies/"+created.Company.ID+"/keys/sk_test/roll", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	if resp, err = contractClient(t).Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("roll: %d", resp.StatusCode)
	}
	if status, body := get(t, a+"/api/v1/management/whoami", "X-Api-Key", key); status != http.StatusUnauthorized {
		t.Fatalf("old key on the rolling gateway: %d %s", status, body)
	}
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if status, _ := get(t, b+"/api/v1/management/whoami", "X-Api-Key", key); status != http.StatusUnauthorized {
			return fmt.Errorf("old key on the other gateway: %d", status)
		}
		return nil
	})
}

// A lease that a request could outlive is refused at start: a retry would run the request again
// while the first still runs.
func TestConfigRefusesALeaseShorterThanTwoRequestTimeouts(t *testing.T) {
	t.Parallel()
	if _, err := service.LoadFrom(map[string]string{"GATEWAY_IDEMPOTENCY_LEASE": "50s", "GATEWAY_REQUEST_TIMEOUT": "30s",
		"IDEMPOTENCY_SECRET": testIdempotencySecret}); err == nil {
		t.Fatal("a 50s lease with 30s requests was accepted")
	}
	cfg, err := service.LoadFrom(map[string]string{"IDEMPOTENCY_SECRET": testIdempotencySecret})
	if err != nil || cfg.IdempotencyLease != time.Minute || cfg.RequestTimeout != 30*time.Second {
		t.Fatalf("defaults: %v %v %v", cfg.IdempotencyLease, cfg.RequestTimeout, err)
	}
}

// The gateway refuses to run on a nats-server older than the platform's minimum, naming it.
func TestGatewayRefusesANATSServerOlderThanTheMinimum(t *testing.T) {
	t.Parallel()
	cfg, err := service.LoadFrom(map[string]string{"DATABASE_URL": testkit.NewDatabase(t, migrations.Set()),
		"NATS_URL": testkit.OldNATSServer(t), "GATEWAY_ADDR": "127.0.0.1:0", "HEALTH_ADDR": "127.0.0.1:0",
		"IDEMPOTENCY_SECRET": testIdempotencySecret})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw, err := service.New(ctx, cfg, service.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Run(ctx); err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "older than 2.10.0") {
		t.Fatalf("Run = %v, want a refusal naming the minimum", err)
	}
}

// contractClient returns an HTTP client that checks every exchange against the OpenAPI
// document (issue 17).
func contractClient(t *testing.T) *http.Client {
	t.Helper()
	v, err := apitest.New()
	if err != nil {
		t.Fatal(err)
	}
	return v.Client(func(err error) { t.Errorf("contract (api/openapi.yaml): %v", err) })
}

// Secrets shorter than 32 bytes are refused at start with a message naming each one (issue 16):
// a short ADMIN_TOKEN or CRON_SECRET can be guessed, and IDEMPOTENCY_SECRET is required. An
// empty ADMIN_TOKEN or CRON_SECRET stays allowed: it locks its routes.
func TestConfigRefusesShortSecrets(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("s", service.MinSecretBytes)
	short := strings.Repeat("s", service.MinSecretBytes-1)
	for _, tc := range []struct {
		name    string
		environ map[string]string
		want    []string // in the error; none: accepted
	}{
		{"all long enough", map[string]string{"ADMIN_TOKEN": long, "CRON_SECRET": long, "IDEMPOTENCY_SECRET": long}, nil},
		{"admin and cron unset", map[string]string{"IDEMPOTENCY_SECRET": long}, nil},
		{"short admin token", map[string]string{"ADMIN_TOKEN": short, "CRON_SECRET": long, "IDEMPOTENCY_SECRET": long},
			[]string{"ADMIN_TOKEN is 31 bytes long; it must be at least 32"}},
		{"short cron secret", map[string]string{"CRON_SECRET": "cron", "IDEMPOTENCY_SECRET": long},
			[]string{"CRON_SECRET is 4 bytes long"}},
		{"no idempotency secret", map[string]string{"ADMIN_TOKEN": long}, []string{"IDEMPOTENCY_SECRET is required"}},
		{"short idempotency secret", map[string]string{"IDEMPOTENCY_SECRET": short}, []string{"IDEMPOTENCY_SECRET is 31 bytes long"}},
		{"every problem at once", map[string]string{"ADMIN_TOKEN": "a", "CRON_SECRET": "c"},
			[]string{"ADMIN_TOKEN is 1 bytes", "CRON_SECRET is 1 bytes", "IDEMPOTENCY_SECRET is required"}},
	} {
		_, err := service.LoadFrom(tc.environ)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
	// A configuration built by hand is checked too.
	cfg := service.Config{AdminToken: short, IdempotencySecret: long}
	cfg.DatabaseURL, cfg.NATSURL = "postgres://x", "nats://y"
	if _, err := service.New(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "ADMIN_TOKEN") {
		t.Errorf("New with a short ADMIN_TOKEN = %v", err)
	}
}
