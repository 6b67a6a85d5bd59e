// Package service wires the gateway: configuration, PostgreSQL, NATS, the use cases and the HTTP
// server. main and tests (and the dev stack) build it the same way, in process.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/gateway/adapters"
	"github.com/payplat/platform/services/gateway/app"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/ports"
	"github.com/payplat/platform/services/gateway/ports/dashboard"
)

// Service is a running gateway: its connections and its bound HTTP listener.
type Service struct {
	cfg      Config
	log      *slog.Logger
	db       *pgxpool.Pool
	nc       *nats.Conn
	js       jetstream.JetStream
	api      *ports.Server
	dash     *dashboard.Dashboard
	keys     *adapters.CachedKeys
	idem     *adapters.IdempotencyRepository
	server   *http.Server
	listener net.Listener
	health   *health.Server
}

// Option adjusts New.
type Option func(*options)

type options struct {
	log      *slog.Logger
	registry *prometheus.Registry
}

// WithLogger makes the service log to log instead of a logger built from the configuration.
func WithLogger(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// WithRegistry registers the service's metrics on reg instead of a fresh registry.
func WithRegistry(reg *prometheus.Registry) Option { return func(o *options) { o.registry = reg } }

// New migrates the gateway schema, connects to PostgreSQL and NATS, builds the HTTP API and binds
// its listener (so Addr is known before Run). Close it, or Run it, to release everything.
func New(ctx context.Context, cfg Config, opts ...Option) (_ *Service, err error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = cfg.Logger(os.Stderr)
	}
	if o.registry == nil {
		o.registry = prometheus.NewRegistry()
		o.registry.MustRegister(collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	cfg = cfg.withDefaults()
	if cfg.DatabaseURL == "" || cfg.NATSURL == "" {
		return nil, errors.New("gateway: DATABASE_URL and NATS_URL are required")
	}
	if err := cfg.checkSecrets(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s := &Service{cfg: cfg, log: o.log}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := migrate.Up(ctx, cfg.DatabaseURL, migrations.Set()); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if s.db, err = pg.Connect(ctx, cfg.DatabaseURL, migrations.Schema, pg.WithStatementTimeout(cfg.StatementTimeout)); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s.keys = adapters.NewCachedKeys(adapters.NewCompanyRepository(s.db), cfg.KeyCacheTTL, s.log)
	// Revocations announced while the connection was down are lost: forget every key.
	if s.nc, err = connectNATS(cfg.Common, s.log, s.keys.Forget); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if err := s.keys.Connect(s.nc); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if s.js, err = jetstream.New(s.nc); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if err := s.buildHTTP(o.registry); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return s, nil
}

func (s *Service) buildHTTP(reg *prometheus.Registry) error {
	checks := map[string]health.Check{
		"postgres": health.PostgresCheck(s.db),
		"nats":     health.NATSCheck(s.nc),
		"streams":  health.StreamsCheck(s.js, bus.StreamNames()...),
	}
	s.idem = adapters.NewIdempotencyRepository(s.db, []byte(s.cfg.IdempotencySecret), s.cfg.IdempotencyLease,
		s.cfg.IdempotencyRetention)
	api, dash, err := newAPI(s.cfg, s.db, s.nc, s.keys, s.idem, checks, s.log, reg)
	if err != nil {
		return err
	}
	s.api, s.dash = api, dash
	if s.listener, err = net.Listen("tcp", s.cfg.Addr); err != nil {
		return fmt.Errorf("listening on %s: %w", s.cfg.Addr, err)
	}
	s.server = &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Open dashboards' live-update streams end at shutdown instead of holding it up.
	s.server.RegisterOnShutdown(dash.Close)
	if s.cfg.HealthAddr != "" {
		s.health = health.New(s.cfg.HealthAddr, checks, reg, s.log)
		if s.cfg.Pprof {
			s.health.ServeProfiles()
		}
	}
	return nil
}

// NewAPI builds the gateway's HTTP API on db (search_path gateway) with the readiness checks,
// logging to log and registering its metrics on reg. New uses it; tests use it to drive the
// real router without a listener or a bus.
func NewAPI(cfg Config, db *pgxpool.Pool, checks map[string]health.Check, log *slog.Logger,
	reg *prometheus.Registry, opts ...APIOption) (*ports.Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkSecrets(); err != nil {
		return nil, err
	}
	var idem ports.IdempotencyRepository = adapters.NewIdempotencyRepository(db, []byte(cfg.IdempotencySecret),
		cfg.IdempotencyLease, cfg.IdempotencyRetention)
	for _, o := range opts {
		idem = o.wrapIdempotency(idem)
	}
	keys := adapters.NewCachedKeys(adapters.NewCompanyRepository(db), cfg.KeyCacheTTL, log)
	api, _, err := newAPI(cfg, db, nil, keys, idem, checks, log, reg)
	return api, err
}

// APIOption adjusts NewAPI.
type APIOption struct {
	wrapIdempotency func(ports.IdempotencyRepository) ports.IdempotencyRepository
}

// WithIdempotencyDecorator wraps the Idempotency-Key repository (tests inject database
// failures around the real repository with it).
func WithIdempotencyDecorator(wrap func(ports.IdempotencyRepository) ports.IdempotencyRepository) APIOption {
	return APIOption{wrapIdempotency: wrap}
}

func newAPI(cfg Config, db *pgxpool.Pool, nc *nats.Conn, keys *adapters.CachedKeys, idem ports.IdempotencyRepository,
	checks map[string]health.Check, log *slog.Logger, reg *prometheus.Registry) (*ports.Server, *dashboard.Dashboard, error) {
	svcs := services{merchants: adapters.NewMerchants(db, nc), webhooks: adapters.NewWebhooks(db, nc),
		pool: adapters.NewPool(db, nc), payments: adapters.NewPayments(db, nc, cfg.PublishTimeout)}
	application := newApplication(db, keys, svcs)
	api, err := ports.NewServer(ports.Deps{
		App:         application,
		Idempotency: idem,
		Logger:      log,
		Registry:    reg,
		Checks:      checks,
		AdminToken:  cfg.AdminToken,
		CronSecret:  cfg.CronSecret,

		RequestTimeout: cfg.RequestTimeout,
		RateLimits:     cfg.RateLimits.ports(),
	})
	if err != nil {
		return nil, nil, err
	}
	dash, err := newDashboard(cfg.Dashboard, db, nc, application, api, svcs, log)
	if err != nil {
		return nil, nil, err
	}
	return api, dash, nil
}

// newApplication builds the use cases; API keys are looked up and rolled through keys (the
// company repository behind the key cache), merchants, pool, payments and webhooks go through
// svcs (the adapters the dashboard reads through too).
func newApplication(db *pgxpool.Pool, keys *adapters.CachedKeys, svcs services) app.Application {
	companies := adapters.NewCompanyRepository(db)
	return app.Application{
		Commands: app.Commands{
			CreateCompany: command.NewCreateCompanyHandler(companies),
			RollAPIKey:    command.NewRollAPIKeyHandler(keys),

			CreateMerchant:         command.NewCreateMerchantHandler(svcs.merchants),
			SetMerchantStatus:      command.NewSetMerchantStatusHandler(svcs.merchants),
			AdminSetMerchantStatus: command.NewAdminSetMerchantStatusHandler(svcs.merchants),

			UpdatePoolSettings:  command.NewUpdatePoolSettingsHandler(svcs.pool),
			SimulatePoolDeposit: command.NewSimulatePoolDepositHandler(svcs.pool),

			ProcessPayment:  command.NewProcessPaymentHandler(svcs.payments),
			SimulatePayment: command.NewSimulatePaymentHandler(svcs.payments),

			ConfigureWebhooks: command.NewConfigureWebhooksHandler(svcs.webhooks),
			RetryWebhook:      command.NewRetryWebhookHandler(svcs.webhooks),
			RunWebhookCron:    command.NewRunWebhookCronHandler(svcs.webhooks),
		},
		Queries: app.Queries{
			ListCompanies: query.NewListCompaniesHandler(companies),
			Authenticate:  query.NewAuthenticateHandler(keys),

			ListMerchants:  query.NewListMerchantsHandler(svcs.merchants),
			MerchantLedger: query.NewMerchantLedgerHandler(svcs.merchants),

			PoolBalance:      query.NewPoolBalanceHandler(svcs.pool),
			PoolTransactions: query.NewPoolTransactionsHandler(svcs.pool),

			ListPayments: query.NewListPaymentsHandler(svcs.payments),

			WebhookLogs: query.NewWebhookLogsHandler(svcs.webhooks),
		},
	}
}

// connectNATS connects with reconnection forever, also when the server is not up yet: the
// gateway then starts, and /readyz says it is not ready until NATS answers.
func connectNATS(cfg config.Common, log *slog.Logger, onReconnect func()) (*nats.Conn, error) {
	client := natsx.Client{Name: "payplat-gateway", User: natsauth.Gateway, Creds: cfg.NATSCreds, CA: cfg.NATSCA}
	nc, err := client.Connect(cfg.NATSURL,
		natsx.LogErrors(log),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "server", nc.ConnectedUrlRedacted())
			onReconnect()
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("connecting to nats: %w", err)
	}
	return nc, nil
}

// HealthAddr returns the address of the health listener (/healthz, /readyz, /metrics), the
// real port once Run has started it; empty without one (a Config built by hand without
// HEALTH_ADDR).
func (s *Service) HealthAddr() string {
	if s.health == nil {
		return ""
	}
	return s.health.Addr()
}

// Addr returns the address the API listens on (host:port, the real port when configured as 0).
func (s *Service) Addr() string { return s.listener.Addr().String() }

// URL returns the API's base URL, http://<Addr>.
func (s *Service) URL() string { return "http://" + s.Addr() }

// API returns the HTTP API, for tests that drive it without a socket or add routes to it
// before Run.
func (s *Service) API() *ports.Server { return s.api }

// Run serves the API until ctx is done, then shuts down gracefully: it stops accepting
// connections, lets requests in flight finish within SHUTDOWN_TIMEOUT, and closes NATS and the
// database. It returns nil after a clean shutdown.
func (s *Service) Run(ctx context.Context) error {
	defer s.Close()
	if s.health != nil {
		if err := s.health.Start(); err != nil {
			return fmt.Errorf("gateway: starting health listener: %w", err)
		}
	}
	purgeCtx, stopPurge := context.WithCancel(ctx)
	purged := make(chan struct{})
	go func() {
		defer close(purged)
		s.purgeIdempotencyKeys(purgeCtx)
	}()
	defer func() { stopPurge(); <-purged }()
	provisioned := make(chan struct{})
	tooOld := make(chan error, 1)
	go func() {
		defer close(provisioned)
		if err := s.provisionStreams(purgeCtx); err != nil {
			tooOld <- err
		}
	}()
	defer func() { stopPurge(); <-provisioned }()
	served := make(chan error, 1)
	go func() { served <- s.server.Serve(s.listener) }()
	s.log.Info("gateway listening", "addr", s.Addr())
	select {
	case err := <-served:
		return fmt.Errorf("gateway: serving: %w", err)
	case err := <-tooOld:
		s.log.Error("refusing to run", "error", err)
		_ = s.server.Close()
		return fmt.Errorf("gateway: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("gateway shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.server.Shutdown(shutdownCtx)
	if s.health != nil {
		err = errors.Join(err, s.health.Shutdown(shutdownCtx))
	}
	if err != nil {
		return fmt.Errorf("gateway: shutting down: %w", err)
	}
	return nil
}

// provisionStreams creates or updates every stream of the bus, retrying until NATS answers (the
// gateway starts while NATS is down; /readyz reports the missing streams meanwhile). It returns
// an error only for a server too old for the platform (natsx.RequireVersion).
func (s *Service) provisionStreams(ctx context.Context) error {
	opts := bus.ProvisionOptions{Replicas: s.cfg.StreamReplicas, DuplicateWindow: s.cfg.DuplicateWindow,
		DeadLetterMaxAge: s.cfg.DeadLetterMaxAge}
	for {
		if err := natsx.RequireVersion(s.nc); err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := bus.Provision(pctx, s.js, opts)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.WarnContext(ctx, "provisioning streams; retrying", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// purgeInterval is how often each replica deletes expired Idempotency-Keys.
const purgeInterval = time.Hour

func (s *Service) purgeIdempotencyKeys(ctx context.Context) {
	t := time.NewTicker(purgeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.idem.Purge(ctx); err != nil {
				s.log.WarnContext(ctx, "purging idempotency keys", "error", err)
			} else if n > 0 {
				s.log.InfoContext(ctx, "purged expired idempotency keys", "count", n)
			}
		}
	}
}

// Close releases the listener and connections without waiting for requests; Run calls it on
// the way out.
func (s *Service) Close() {
	if s.server != nil {
		_ = s.server.Close()
	} else if s.listener != nil {
		_ = s.listener.Close()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
}
