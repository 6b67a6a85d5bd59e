package command_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/app/command"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// fixture is the configuration and manual retry use cases, with a Dispatcher as their engine,
// on a fresh database with the real store and HTTP sender.
type fixture struct {
	configureEndpoint command.ConfigureEndpointHandler
	retryDelivery     command.RetryDeliveryHandler
	db                *pgxpool.Pool
	log               *testkit.Buffer
}

func newFixture(t *testing.T, cfg app.Config, policy domain.URLPolicy) *fixture {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: migrations.Schema,
		Sources: service.Options(service.Config{}).Migrations})
	db := testkit.NewPool(t, dsn, migrations.Schema)
	box, err := domain.NewSecretBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := app.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	f := &fixture{db: db, log: &testkit.Buffer{}}
	sender := adapters.NewSender(adapters.SenderConfig{Timeout: cfg.Timeout, Policy: policy})
	repo := adapters.NewRepository(db)
	d := app.NewDispatcher(repo, sender, box, cfg, metrics,
		slog.New(slog.NewJSONHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	f.configureEndpoint = command.NewConfigureEndpointHandler(repo, policy, box)
	f.retryDelivery = command.NewRetryDeliveryHandler(repo, d)
	return f
}

// configure points company's test endpoint at url.
func (f *fixture) configure(t *testing.T, company, url string) {
	t.Helper()
	if _, err := f.configureEndpoint.Handle(context.Background(), command.ConfigureEndpoint{CompanyID: company,
		Environment: "test", URL: &url}); err != nil {
		t.Fatal(err)
	}
}

// failedDelivery creates a delivery of company, already attempted once and due for a retry.
func (f *fixture) failedDelivery(t *testing.T, company string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if _, err := f.db.Exec(context.Background(), `INSERT INTO deliveries (id, endpoint_id, company_id, environment,
		event_id, event_type, payload, status, attempts, last_attempt_at, next_attempt_at)
		SELECT $1, id, company_id, environment, gen_random_uuid(), 'payment.created', '{"event":"payment.created"}',
			'FAILED', 1, now() - interval '10 minutes', now() - interval '5 minutes'
		FROM endpoints WHERE company_id = $2 AND environment = 'test'`, id, company); err != nil {
		t.Fatal(err)
	}
	return id
}

// retry is a manual retry of delivery id of company and env.
func (f *fixture) retry(ctx context.Context, company, env string, id uuid.UUID) (domain.Delivery, error) {
	return f.retryDelivery.Handle(ctx, command.RetryDelivery{CompanyID: company, Environment: env, DeliveryID: id})
}

// closedPort returns an address on 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A failed attempt shows the partner only the generic message, in the delivery log and in the
// retry's answer; the service log has what happened, with the address dialled.
func TestFailureDetailsGoToTheServiceLogOnly(t *testing.T) {
	f := newFixture(t, app.Config{}, domain.URLPolicy{AllowPrivateNetworks: true, AllowAnyPort: true})
	addr := closedPort(t)
	f.configure(t, "acme", "https://"+addr+"/hooks?token=partner-secret")
	id := f.failedDelivery(t, "acme")
	del, err := f.retry(context.Background(), "acme", "test", id)
	if err != nil {
		t.Fatal(err)
	}
	if del.ErrorMessage == nil || *del.ErrorMessage != domain.FailConnect {
		t.Fatalf("partner-visible error %v, want %q", del.ErrorMessage, domain.FailConnect)
	}
	var stored string
	if err := f.db.QueryRow(context.Background(), `SELECT error_message FROM deliveries WHERE id = $1`, id).
		Scan(&stored); err != nil || stored != domain.FailConnect {
		t.Fatalf("stored error %q (%v), want %q", stored, err, domain.FailConnect)
	}
	recs := f.log.Records(t, "webhook attempt")
	if len(recs) != 1 {
		t.Fatalf("%d attempt records in the service log, want 1", len(recs))
	}
	detail, _ := recs[0]["detail"].(string)
	if recs[0]["error"] != domain.FailConnect || !strings.Contains(detail, "connection refused") ||
		!strings.Contains(detail, addr) {
		t.Fatalf("service log record %v: want the refusal and %s in its detail", recs[0], addr)
	}
	if strings.Contains(detail, "partner-secret") {
		t.Fatalf("the service log holds the endpoint URL's query: %q", detail)
	}
}

// Manual retries are a token bucket per company and environment: past the burst a retry is
// refused before anything is claimed or sent, with the wait until the next; another company,
// and the same company's other environment, keep their own budgets.
func TestManualRetriesAreRateLimitedPerCompany(t *testing.T) {
	f := newFixture(t, app.Config{ManualRetries: app.RetryLimit{Rate: 0.01, Burst: 2}},
		domain.URLPolicy{AllowHTTP: true, AllowPrivateNetworks: true, AllowAnyPort: true})
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(rc.Close)
	f.configure(t, "acme", rc.URL)
	f.configure(t, "beta", rc.URL)
	ctx := context.Background()
	id := f.failedDelivery(t, "acme")
	for i := range 2 {
		if del, err := f.retry(ctx, "acme", "test", id); err != nil || del.Status != domain.StatusSuccess {
			t.Fatalf("retry %d within the burst: %+v, %v", i+1, del, err)
		}
	}
	_, err := f.retry(ctx, "acme", "test", id)
	var limited *domain.RateLimitedError
	if !errors.As(err, &limited) || !errors.Is(err, domain.ErrRateLimited) || limited.Seconds() < 1 ||
		limited.RetryAfter > 100*time.Second {
		t.Fatalf("third retry: %v, want a rate limit with a wait of at most 100 s", err)
	}
	if hits.Load() != 2 {
		t.Fatalf("the receiver got %d requests, want 2", hits.Load())
	}
	var attempts int
	if err := f.db.QueryRow(ctx, `SELECT attempts FROM deliveries WHERE id = $1`, id).Scan(&attempts); err != nil ||
		attempts != 3 {
		t.Fatalf("attempts %d (%v), want 3: the refused retry must not count", attempts, err)
	}
	if _, err := f.retry(ctx, "beta", "test", f.failedDelivery(t, "beta")); err != nil {
		t.Fatalf("another company's retry: %v", err)
	}
	if _, err := f.retry(ctx, "acme", "live", uuid.New()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the other environment's retry: %v, want not found (its own budget)", err)
	}
}
