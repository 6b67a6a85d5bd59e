package ports_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/service"
)

// runGateway runs the real gateway service (service.New + Run, with a fresh admin token and
// cron secret) on dsn and natsURL until the test ends, waits until /readyz answers 200, and
// returns a client of it and a JetStream handle on the same NATS server. The backend services
// a test needs are started beside it (svctest.StartOn). env sets more variables (name, value,
// ...).
func runGateway(t *testing.T, dsn, natsURL string, env ...string) (*gateway, jetstream.JetStream) {
	t.Helper()
	admin, cron := randomToken(), randomToken()
	environ := map[string]string{"DATABASE_URL": dsn, "NATS_URL": natsURL,
		"GATEWAY_ADDR": "127.0.0.1:0", "HEALTH_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": admin, "CRON_SECRET": cron,
		"IDEMPOTENCY_SECRET": randomToken()}
	for i := 0; i+1 < len(env); i += 2 {
		environ[env[i]] = env[i+1]
	}
	cfg, err := service.LoadFrom(environ)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RateLimits = service.RateLimitConfig{} // as in newGateway
	ctx, cancel := context.WithCancel(context.Background())
	gw, err := service.New(ctx, cfg, service.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gw.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway: %v", err)
		}
	})
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, url: gw.URL(), api: gw.API(), client: contractClient(t, gw.API()), adminToken: admin,
		cronSecret: cron, logs: &testkit.Buffer{}}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if r := g.do(request{method: http.MethodGet, path: "/readyz"}); r.status != http.StatusOK {
			return errors.New(string(r.body))
		}
		return nil
	})
	return g, js
}
