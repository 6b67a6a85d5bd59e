// Package service wires the merchant service: the merchant aggregate's event store in schema
// "merchant" (relayed to the MERCHANTS stream), its read tables, the HD wallet provider, the
// command API over NATS (micro service "merchant") and the ledger consumers.
package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/caarlos0/env/v11"
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
	// WalletXPubLive and WalletXPubTest are the account-level extended public keys live and
	// test wallets derive from (WALLET_XPUB_LIVE: m/44'/60'/0', WALLET_XPUB_TEST: m/44'/60'/1').
	// The operator produces them from the seed outside the platform (payplat-ctl wallet xpub);
	// the service never sees a private key. Required unless Deps.Wallets is set.
	WalletXPubLive string `env:"WALLET_XPUB_LIVE"`
	WalletXPubTest string `env:"WALLET_XPUB_TEST"`
	// CommandTimeout bounds each command of the command API (MERCHANT_COMMAND_TIMEOUT; zero
	// means DefaultCommandTimeout).
	CommandTimeout time.Duration `env:"MERCHANT_COMMAND_TIMEOUT" envDefault:"8s"`
	// Wallets, when set, builds the wallet provider instead of the HD provider of the account
	// keys above (tests).
	Wallets func(db *pgxpool.Pool) (app.WalletProvider, error) `env:"-"`
}

// DefaultCommandTimeout is the deadline of a command: past it the command's context ends, its
// transaction rolls back and the caller gets an error, so a stuck wallet provider or database
// cannot hold a request slot and a connection for ever. It is below the 10 s a caller waits by
// default (api.DefaultTimeout), so that the caller gets the command's own answer rather than
// a timeout of its own.
const DefaultCommandTimeout = 8 * time.Second

// retiredSeedVar held the master seed the service derived wallets from before it was given
// extended public keys only. It is refused rather than ignored: a seed left in the service's
// environment is exactly what the change takes away.
const retiredSeedVar = "WALLET_MASTER_SEED"

// LoadConfig reads Config from the environment and checks it.
func LoadConfig() (Config, error) { return LoadConfigFrom(env.ToMap(os.Environ())) }

// LoadConfigFrom reads Config from environ (variable name to value) and checks it.
func LoadConfigFrom(environ map[string]string) (Config, error) {
	if _, set := environ[retiredSeedVar]; set {
		return Config{}, errors.New(retiredSeedVar + " is set: the merchant service no longer takes the wallet seed. " +
			"Produce the account keys outside the platform with `payplat-ctl wallet xpub` (the seed on its standard input), " +
			"set WALLET_XPUB_LIVE and WALLET_XPUB_TEST to them, and remove " + retiredSeedVar + " from this service's environment " +
			"(services/merchant/README.md#wallets)")
	}
	cfg, err := config.LoadFrom[Config](environ)
	if err != nil {
		return Config{}, err
	}
	if _, err := adapters.ParseAccountKeys(cfg.WalletXPubLive, cfg.WalletXPubTest); err != nil {
		return Config{}, err
	}
	if cfg.CommandTimeout <= 0 {
		return Config{}, fmt.Errorf("MERCHANT_COMMAND_TIMEOUT must be positive, not %s", cfg.CommandTimeout)
	}
	return cfg, nil
}

// Options describes the merchant service for the shared runtime. Without the wallet account
// keys or a wallet provider (cfg.Wallets) the service refuses to start.
func Options(cfg Config) svc.Options {
	return svc.Options{
		Name:              "merchant",
		Schema:            migrations.Schema,
		Migrations:        migrations.Sources,
		DefaultHealthAddr: "127.0.0.1:8081",
		RelayStream:       "MERCHANTS",
		Start:             func(ctx context.Context, rt *svc.Runtime) error { return start(ctx, rt, cfg) },
	}
}

func start(ctx context.Context, rt *svc.Runtime, cfg Config) error {
	wallets, err := walletProvider(ctx, rt.DB, cfg)
	if err != nil {
		return err
	}
	repo := adapters.NewRepository(rt.DB, rt.Store)
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

func walletProvider(ctx context.Context, db *pgxpool.Pool, cfg Config) (app.WalletProvider, error) {
	if cfg.Wallets != nil {
		return cfg.Wallets(db)
	}
	keys, err := adapters.ParseAccountKeys(cfg.WalletXPubLive, cfg.WalletXPubTest)
	if err != nil {
		return nil, err
	}
	hd, err := adapters.NewHDWalletProvider(db, keys)
	if err != nil {
		return nil, err
	}
	// Keys made from another seed than the recorded wallets' would hand out addresses the
	// operator's seed cannot spend from: refuse them before the first one.
	if err := hd.Verify(ctx); err != nil {
		return nil, err
	}
	return hd, nil
}

// startLedger creates the ledger's durable consumers and runs one projection runner on each.
func startLedger(ctx context.Context, rt *svc.Runtime, repo *adapters.Repository) error {
	dl, metrics, err := rt.ConsumerSupport()
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
		rt.WatchConsumer(spec.Durable, runner.Progress())
		pruner, err := projection.NewPruner(rt.DB, consumer, spec.Durable, rt.PruneOptions())
		if err != nil {
			return err
		}
		rt.Go(spec.Durable+"-prune", pruner.Run)
	}
	return nil
}
