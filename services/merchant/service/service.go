// Package service wires the merchant service: the merchant aggregate's event store in schema
// "merchant" (relayed to the MERCHANTS stream), its read tables, the HD wallet provider, the
// command API over NATS (micro service "merchant") and the ledger consumers.
package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/app/command"
	"github.com/payplat/platform/services/merchant/app/query"
	"github.com/payplat/platform/services/merchant/migrations"
	"github.com/payplat/platform/services/merchant/ports"
)

// Version of the micro service, shown by `nats micro info merchant`.
const Version = "1.0.0"

// Config is the merchant service's own configuration (the shared one is svc.Config).
type Config struct {
	// WalletMasterSeed is the hex master seed (16 to 64 bytes) merchant wallets derive from
	// (WALLET_MASTER_SEED). Required unless Deps.Wallets is set.
	WalletMasterSeed string `env:"WALLET_MASTER_SEED"`
	// CommandTimeout bounds each command of the command API (MERCHANT_COMMAND_TIMEOUT; zero
	// means DefaultCommandTimeout).
	CommandTimeout time.Duration `env:"MERCHANT_COMMAND_TIMEOUT" envDefault:"8s"`
}

// DefaultCommandTimeout is the deadline of a command: past it the command's context ends, its
// transaction rolls back and the caller gets an error, so a stuck wallet provider or database
// cannot hold a request slot and a connection for ever. It is below the 10 s a caller waits by
// default (api.DefaultTimeout), so that the caller gets the command's own answer rather than
// a timeout of its own.
const DefaultCommandTimeout = 8 * time.Second

// LoadConfig reads Config from the environment and checks it.
func LoadConfig() (Config, error) {
	cfg, err := config.Load[Config]()
	if err != nil {
		return Config{}, err
	}
	if cfg.WalletMasterSeed == "" {
		return Config{}, errors.New("WALLET_MASTER_SEED is required (hex, 16 to 64 bytes)")
	}
	if _, err := adapters.ParseSeed(cfg.WalletMasterSeed); err != nil {
		return Config{}, err
	}
	if cfg.CommandTimeout <= 0 {
		return Config{}, fmt.Errorf("MERCHANT_COMMAND_TIMEOUT must be positive, not %s", cfg.CommandTimeout)
	}
	return cfg, nil
}

// Deps replaces parts of the service (tests).
type Deps struct {
	// Wallets builds the wallet provider; nil means the HD provider of Config.WalletMasterSeed.
	Wallets func(db *pgxpool.Pool) (app.WalletProvider, error)
}

// Option configures Options.
type Option func(*settings)

type settings struct {
	cfg  Config
	deps Deps
}

// WithConfig sets the merchant service's own configuration.
func WithConfig(cfg Config) Option { return func(s *settings) { s.cfg = cfg } }

// WithDeps replaces parts of the service.
func WithDeps(d Deps) Option { return func(s *settings) { s.deps = d } }

// Options describes the merchant service for the shared runtime. Without a wallet master seed
// (WithConfig) or a wallet provider (WithDeps) the service refuses to start.
func Options(opts ...Option) svc.Options {
	var st settings
	for _, o := range opts {
		o(&st)
	}
	cfg, deps := st.cfg, st.deps
	return svc.Options{
		Name:              "merchant",
		Schema:            migrations.Schema,
		Migrations:        migrations.Sources,
		DefaultHealthAddr: "127.0.0.1:8081",
		RelayStream:       "MERCHANTS",
		Start:             func(ctx context.Context, rt *svc.Runtime) error { return start(ctx, rt, cfg, deps) },
	}
}

func start(ctx context.Context, rt *svc.Runtime, cfg Config, deps Deps) error {
	wallets, err := walletProvider(rt.DB, cfg, deps)
	if err != nil {
		return err
	}
	repo := adapters.NewMerchantRepository(rt.DB, rt.Store)
	if err := startLedger(ctx, rt, repo); err != nil {
		return err
	}
	timeout := cfg.CommandTimeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	srv, err := ports.StartCommandServer(rt.NC, ports.Application{
		CreateMerchant: command.NewCreateMerchantHandler(repo, wallets),
		ChangeStatus:   command.NewChangeStatusHandler(repo),
		MerchantStatus: query.NewMerchantStatusHandler(repo),
	}, Version, timeout, rt.Log)
	if err != nil {
		return fmt.Errorf("starting the command API: %w", err)
	}
	rt.Go("commands", func(ctx context.Context) error {
		<-ctx.Done()
		return srv.Stop()
	})
	return nil
}

func walletProvider(db *pgxpool.Pool, cfg Config, deps Deps) (app.WalletProvider, error) {
	if deps.Wallets != nil {
		return deps.Wallets(db)
	}
	if cfg.WalletMasterSeed == "" {
		return nil, errors.New("WALLET_MASTER_SEED is required (hex, 16 to 64 bytes)")
	}
	seed, err := adapters.ParseSeed(cfg.WalletMasterSeed)
	if err != nil {
		return nil, err
	}
	return adapters.NewHDWalletProvider(db, seed)
}

// startLedger creates the ledger's durable consumers and runs one projection runner on each.
func startLedger(ctx context.Context, rt *svc.Runtime, repo *adapters.MerchantRepository) error {
	dl, err := bus.NewDeadLetterer(rt.JS, rt.Registry)
	if err != nil {
		return err
	}
	metrics, err := bus.NewConsumerMetrics(rt.Registry)
	if err != nil {
		return err
	}
	for _, spec := range []bus.ConsumerSpec{ports.PaymentsConsumer, ports.WalletsConsumer} {
		consumer, err := bus.EnsurePullConsumer(ctx, rt.JS, spec)
		if err != nil {
			return err
		}
		runner, err := projection.NewStreamRunner(rt.DB, consumer, spec.Durable,
			ports.NewLedgerProjector(spec.Durable, repo),
			projection.StreamRunnerOptions{BatchSize: 500, DeadLetter: dl.SendJetStream, Logger: rt.Log, Metrics: metrics})
		if err != nil {
			return err
		}
		rt.Go(spec.Durable, runner.Run)
		pruner, err := projection.NewPruner(rt.DB, consumer, spec.Durable, rt.PruneOptions())
		if err != nil {
			return err
		}
		rt.Go(spec.Durable+"-prune", pruner.Run)
	}
	return nil
}
