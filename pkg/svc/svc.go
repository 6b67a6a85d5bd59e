// Package svc is the runtime every backend service shares: configuration, PostgreSQL with the
// service's migrations, NATS with the streams provisioned, the event-store relay when the
// service owns an event store, the health/metrics listener, background workers and a graceful
// shutdown. A service's main is one call to Main with its Options.
package svc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/relay"
)

// Config is the configuration every service reads from the environment.
type Config struct {
	config.Common
	// StreamReplicas is the replica count of the JetStream streams the service provisions
	// (STREAM_REPLICAS: 1 on one server, 3 on a production cluster).
	StreamReplicas int `env:"STREAM_REPLICAS" envDefault:"1"`
	// DuplicateWindow is the streams' de-duplication window (STREAM_DUPLICATE_WINDOW).
	DuplicateWindow time.Duration `env:"STREAM_DUPLICATE_WINDOW" envDefault:"2m"`
	// RelayLease is the lease of the event-store relay's leadership (RELAY_LEASE,
	// RELAY_LEASE_RENEW), for the services that own an event store.
	RelayLease relay.Lease
	// DeadLetterMaxAge is how long the dead-letter stream keeps a message (DEADLETTER_MAX_AGE).
	DeadLetterMaxAge time.Duration `env:"DEADLETTER_MAX_AGE" envDefault:"720h"`
	// ProjectionPruneInterval and ProjectionAppliedRetention tune the pruning of the event ids
	// stream-fed projections record (PROJECTION_PRUNE_INTERVAL, PROJECTION_APPLIED_RETENTION;
	// see projection.PruneOptions).
	ProjectionPruneInterval    time.Duration `env:"PROJECTION_PRUNE_INTERVAL" envDefault:"5m"`
	ProjectionAppliedRetention time.Duration `env:"PROJECTION_APPLIED_RETENTION" envDefault:"1h"`
	// ConsumerStallAfter is how long a stream consumer with messages to apply may go without
	// settling one before /readyz reports it stalled (CONSUMER_STALL_AFTER; bus.Progress).
	ConsumerStallAfter time.Duration `env:"CONSUMER_STALL_AFTER" envDefault:"60s"`
}

// Options describe one service.
type Options struct {
	// Name of the service, used in logs, metrics and the NATS connection name.
	Name string
	// Schema is the PostgreSQL schema the service owns.
	Schema string
	// Migrations of the schema (event store, projection and the service's own files).
	Migrations []fs.FS
	// DefaultHealthAddr is the listen address of /healthz, /readyz and /metrics unless
	// HEALTH_ADDR says otherwise.
	DefaultHealthAddr string
	// RelayStream, when set, makes the service own an event store whose events the relay
	// publishes to this JetStream stream.
	RelayStream string
	// Start registers the service's own workers once everything is connected.
	Start func(ctx context.Context, rt *Runtime) error
	// OnReady, if set, is called once the service serves its health listener.
	OnReady func(rt *Runtime)
}

// Runtime is what a running service has at hand.
type Runtime struct {
	Config   Config
	Log      *slog.Logger
	DB       *pgxpool.Pool
	NC       *nats.Conn
	JS       jetstream.JetStream
	Registry *prometheus.Registry
	// Store is the service's event store (nil unless Options.RelayStream is set).
	Store *eventstore.Store

	health  *health.Server
	checks  map[string]health.Check
	workers []worker
}

type worker struct {
	name string
	run  func(ctx context.Context) error
}

// Go registers a background worker. Workers run until the service stops; one returning an
// error stops the service.
func (rt *Runtime) Go(name string, run func(ctx context.Context) error) {
	rt.workers = append(rt.workers, worker{name: name, run: run})
}

// AddCheck adds a readiness check to /readyz.
func (rt *Runtime) AddCheck(name string, c health.Check) { rt.checks[name] = c }

// HealthAddr is the bound address of the health listener.
func (rt *Runtime) HealthAddr() string { return rt.health.Addr() }

// LoadConfig reads the configuration from the environment with the service's defaults.
func LoadConfig(o Options) (Config, error) {
	return config.Load(func(c *Config) { c.HealthAddr = o.DefaultHealthAddr })
}

// Main runs the service until SIGINT or SIGTERM, with the garbage collector tuned (TuneGC), and
// returns the process exit code.
func Main(o Options) int {
	TuneGC()
	cfg, err := LoadConfig(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log := cfg.Logger(os.Stderr).With("service", o.Name)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, cfg, o, log); err != nil {
		log.Error("service stopped with an error", "err", err)
		return 1
	}
	return 0
}

// Run connects, starts and serves the service until ctx ends or a worker fails.
func Run(ctx context.Context, cfg Config, o Options, log *slog.Logger) error {
	rt, err := connect(ctx, cfg, o, log)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.start(ctx, o); err != nil {
		return err
	}
	return rt.serve(ctx, o)
}

func connect(ctx context.Context, cfg Config, o Options, log *slog.Logger) (*Runtime, error) {
	if cfg.DatabaseURL == "" || cfg.NATSURL == "" {
		return nil, errors.New("DATABASE_URL and NATS_URL are required")
	}
	rt := &Runtime{Config: cfg, Log: log, Registry: prometheus.NewRegistry(), checks: map[string]health.Check{}}
	rt.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Dependencies started beside the service (or restarting) may not answer yet: wait for
	// them instead of exiting, so that any start order works.
	err := waitFor(ctx, log, "PostgreSQL", func(ctx context.Context) error {
		if err := migrate.Up(ctx, cfg.DatabaseURL, migrate.Set{Schema: o.Schema, Sources: o.Migrations}); err != nil {
			return unlessUnreachable(err)
		}
		db, err := pg.Connect(ctx, cfg.DatabaseURL, o.Schema)
		rt.DB = db
		return unlessUnreachable(err)
	})
	if err != nil {
		return nil, err
	}
	// Each service logs in as the natsauth user of its name (NATS_CREDS), with its permissions.
	client := natsx.Client{Name: o.Name, User: o.Name, Creds: cfg.NATSCreds, CA: cfg.NATSCA}
	nc, err := client.Connect(cfg.NATSURL, nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.RetryOnFailedConnect(true), natsx.LogErrors(log))
	if err != nil {
		rt.DB.Close()
		return nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	rt.NC = nc
	if rt.JS, err = jetstream.New(nc); err != nil {
		rt.close()
		return nil, err
	}
	err = waitFor(ctx, log, "NATS JetStream (streams)", func(ctx context.Context) error {
		// Once connected, a server too old for the streams and consumers is no reason to wait.
		if err := natsx.RequireVersion(rt.NC); err != nil {
			return permanentError{err}
		}
		return provision(ctx, rt)
	})
	if err != nil {
		rt.close()
		return nil, err
	}
	return rt, nil
}

// permanentError is a failure that waiting cannot cure (a migration that does not apply).
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// unlessUnreachable marks err permanent unless it says that PostgreSQL cannot be reached or is
// not accepting connections yet (starting, recovering, shutting down).
func unlessUnreachable(err error) error {
	var (
		connect *pgconn.ConnectError
		pgErr   *pgconn.PgError
		netErr  net.Error
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &connect), errors.As(err, &netErr), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), pgconn.SafeToRetry(err):
		return err
	case errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08")):
		return err
	case strings.Contains(err.Error(), "connect: connection refused"), strings.Contains(err.Error(), "failed to connect"):
		return err // goose flattens the errors it wraps
	default:
		return permanentError{err}
	}
}

// waitFor runs step until it succeeds, fails permanently (permanentError) or ctx ends, each try
// bounded by 10 seconds, backing off up to 5 seconds between tries. It logs the first failure at
// info and a warning every 30 seconds while it lasts.
func waitFor(ctx context.Context, log *slog.Logger, what string, step func(context.Context) error) error {
	start, warned := time.Now(), time.Now()
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := step(sctx)
		cancel()
		var permanent permanentError
		switch {
		case errors.As(err, &permanent):
			return permanent.error
		case err == nil:
			if time.Since(start) > time.Second {
				log.Info("dependency answered", "dependency", what, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for %s: %w", what, err)
		case wait == 200*time.Millisecond:
			log.Info("waiting for a dependency", "dependency", what, "err", err)
		case time.Since(warned) > 30*time.Second:
			warned = time.Now()
			log.Warn("still waiting for a dependency", "dependency", what, "waited", time.Since(start).Round(time.Second).String(), "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, err)
		case <-time.After(wait):
		}
	}
}

func (rt *Runtime) start(ctx context.Context, o Options) error {
	rt.checks["postgres"] = health.PostgresCheck(rt.DB)
	rt.checks["nats"] = health.NATSCheck(rt.NC)
	rt.checks["streams"] = health.StreamsCheck(rt.JS, bus.StreamNames()...)
	if o.RelayStream != "" {
		rt.Store = eventstore.New(rt.DB)
		r, err := relay.New(rt.Store, rt.JS, relay.Config{Name: o.Name, Stream: o.RelayStream,
			Lease: rt.Config.RelayLease, Logger: rt.Log, Registerer: rt.Registry})
		if err != nil {
			return err
		}
		rt.Go("relay", r.Run)
	}
	if o.Start != nil {
		if err := o.Start(ctx, rt); err != nil {
			return fmt.Errorf("starting %s: %w", o.Name, err)
		}
	}
	rt.health = health.New(rt.Config.HealthAddr, rt.checks, rt.Registry, rt.Log)
	if rt.Config.Pprof {
		rt.health.ServeProfiles()
	}
	return rt.health.Start()
}

// serve runs the workers until ctx ends or one fails, then shuts down within the timeout.
func (rt *Runtime) serve(ctx context.Context, o Options) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for _, w := range rt.workers {
		wg.Add(1)
		go func(w worker) {
			defer wg.Done()
			if err := w.run(wctx); err != nil && wctx.Err() == nil {
				once.Do(func() { firstErr = fmt.Errorf("%s: %w", w.name, err) })
				cancel()
			}
		}(w)
	}
	rt.Log.Info("service ready", "health_addr", rt.HealthAddr())
	if o.OnReady != nil {
		o.OnReady(rt)
	}
	<-wctx.Done()
	rt.Log.Info("shutting down")
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), rt.Config.ShutdownTimeout)
	defer scancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-sctx.Done():
		rt.Log.Warn("workers did not stop within the shutdown timeout")
	}
	if err := rt.health.Shutdown(sctx); err != nil {
		rt.Log.Warn("health listener shutdown", "err", err)
	}
	return firstErr
}

func (rt *Runtime) close() {
	if rt.NC != nil {
		_ = rt.NC.Drain()
	}
	if rt.DB != nil {
		rt.DB.Close()
	}
}
