// Package devstack runs the whole platform on one machine, in the foreground, for `make run`
// (DESIGN.md §6): a local PostgreSQL cluster and an embedded NATS JetStream server unless
// DATABASE_URL and NATS_URL point elsewhere, the five service binaries as supervised child
// processes, a demo company with its API keys in $DATA_DIR/dev-credentials.json, and a timer
// that calls the gateway's cron endpoint.
package devstack

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/payplat/platform/pkg/pg"
)

// Config is the dev stack's configuration, read once from the environment by LoadConfig.
type Config struct {
	// BinDir holds the service binaries (BIN_DIR, default $DATA_DIR/bin; `make build` puts
	// them there).
	BinDir string `env:"BIN_DIR"`
	// DataDir holds everything the stack keeps between runs (DATA_DIR, default .data).
	DataDir string `env:"DATA_DIR" envDefault:".data"`
	// DatabaseURL, when set, is used instead of the local cluster (DATABASE_URL).
	DatabaseURL string `env:"DATABASE_URL"`
	// DatabaseRoles gives each service its own database role (DEV_DB_ROLES, default true): the
	// stack lays out pg.Roles with the DATABASE_URL's (superuser) role and each service logs in
	// as its own role without a password, which needs a server that trusts local connections
	// (the stack's own cluster does). false: every service uses DATABASE_URL as it is.
	DatabaseRoles bool `env:"DEV_DB_ROLES" envDefault:"true"`
	// NATSURL, when set, is used instead of the embedded server (NATS_URL).
	NATSURL string `env:"NATS_URL"`
	// NATSKeysDir is the directory of the natsauth users' NKey seeds (DEV_NATS_KEYS): with
	// NATS_URL, those the server at NATS_URL knows (empty: a server without authorization);
	// without, where the stack keeps its own NATS's keys (default $DATA_DIR/nats-keys,
	// generated on the first run).
	NATSKeysDir string `env:"DEV_NATS_KEYS"`
	// GatewayAddr is where the gateway listens (GATEWAY_ADDR, default 127.0.0.1:8080).
	GatewayAddr string `env:"GATEWAY_ADDR" envDefault:"127.0.0.1:8080"`

	// PostgresPort is the local cluster's port (DEV_PG_PORT, default 5433, clear of a system
	// server on 5432).
	PostgresPort int `env:"DEV_PG_PORT" envDefault:"5433"`
	// NATSPort is the embedded NATS server's port (DEV_NATS_PORT, default 4250); in cluster mode
	// the three nodes listen on it and the two ports after it (their routes 2000 above).
	NATSPort int `env:"DEV_NATS_PORT" envDefault:"4250"`
	// Cluster runs the production shape (DEV_CLUSTER, `make run CLUSTER=1`): a 3-node NATS
	// JetStream cluster (nats-server processes from BIN_DIR, streams with 3 replicas) and two
	// replicas of every service (health ports 10 above the first replica's, gateway on
	// GATEWAY_ADDR and the port 10 above).
	Cluster bool `env:"DEV_CLUSTER"`
	// Replicas, when above 0, is the number of processes of each service whatever the NATS
	// shape (DEV_REPLICAS): 2 on one NATS server measures what a second replica of every
	// consumer costs or gains (docs/BENCHMARKS.md).
	Replicas int `env:"DEV_REPLICAS"`
	// HealthPortBase is the health listener port of the first non-gateway service; the others
	// follow in the order of Services, then the gateway's (DEV_HEALTH_PORT_BASE, default 8081:
	// merchant 8081, pool 8082, payment-projection 8083, webhook-dispatcher 8084, gateway 8085).
	HealthPortBase int `env:"DEV_HEALTH_PORT_BASE" envDefault:"8081"`

	// CronInterval is how often the gateway's cron endpoint is called (DEV_CRON_INTERVAL,
	// default 1m; 0 turns it off).
	CronInterval time.Duration `env:"DEV_CRON_INTERVAL" envDefault:"1m"`
	// ReadyTimeout bounds the wait for every service's /readyz (DEV_READY_TIMEOUT, default 2m).
	ReadyTimeout time.Duration `env:"DEV_READY_TIMEOUT" envDefault:"2m"`
	// StopTimeout is how long children get after SIGTERM before SIGKILL (DEV_STOP_TIMEOUT,
	// default 20s: above the services' own 15s SHUTDOWN_TIMEOUT).
	StopTimeout time.Duration `env:"DEV_STOP_TIMEOUT" envDefault:"20s"`
	// CompanyName names the demo company created on first start (DEV_COMPANY_NAME).
	CompanyName string `env:"DEV_COMPANY_NAME" envDefault:"Demo Company"`

	// LogFormat is handed to the children (LOG_FORMAT, default text for a terminal).
	LogFormat string `env:"LOG_FORMAT" envDefault:"text"`
	// LogLevel is the level of the dev stack and of the children (LOG_LEVEL, default info).
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`

	// Secrets set in the environment override the generated ones (ADMIN_TOKEN, CRON_SECRET,
	// IDEMPOTENCY_SECRET, WEBHOOK_SECRET_KEY, WALLET_XPUB_LIVE, WALLET_XPUB_TEST).
	Secrets Secrets

	// ExtraEnv is appended to every child's environment (tests use it; not read from the
	// environment).
	ExtraEnv []string
	// Hurry, when closed during a stop, kills the services still running instead of waiting
	// StopTimeout for them (StopSignals; not read from the environment).
	Hurry <-chan struct{} `env:"-"`
}

// MinSecretBytes is the shortest ADMIN_TOKEN, CRON_SECRET and IDEMPOTENCY_SECRET the gateway
// accepts (services/gateway/service.MinSecretBytes).
const MinSecretBytes = 32

// LoadConfig reads a Config from environ (variable name to value; env.ToMap(os.Environ())
// in main). Empty variables keep their defaults.
func LoadConfig(environ map[string]string) (Config, error) {
	if environ == nil {
		environ = map[string]string{}
	}
	if _, set := environ["WALLET_MASTER_SEED"]; set {
		return Config{}, errors.New("WALLET_MASTER_SEED is no longer read: the merchant service takes extended public keys only. " +
			"Produce them with `payplat-ctl wallet xpub` (the seed on its standard input) and set WALLET_XPUB_LIVE and WALLET_XPUB_TEST instead")
	}
	var cfg Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: environ}); err != nil {
		return Config{}, fmt.Errorf("reading configuration: %w", err)
	}
	if cfg.BinDir == "" {
		cfg.BinDir = filepath.Join(cfg.DataDir, "bin")
	}
	return cfg, cfg.Validate()
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	ports := []struct {
		name string
		port int
	}{{"DEV_PG_PORT", c.PostgresPort}, {"DEV_NATS_PORT", c.NATSPort}, {"DEV_HEALTH_PORT_BASE", c.HealthPortBase}}
	for _, p := range ports {
		if p.port <= 0 || p.port > 65535-len(Services) {
			errs = append(errs, fmt.Errorf("%s: invalid port %d", p.name, p.port))
		}
	}
	if c.CronInterval < 0 {
		errs = append(errs, fmt.Errorf("DEV_CRON_INTERVAL: negative duration %s", c.CronInterval))
	}
	if c.ReadyTimeout <= 0 || c.StopTimeout <= 0 {
		errs = append(errs, errors.New("DEV_READY_TIMEOUT and DEV_STOP_TIMEOUT must be positive"))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("LOG_FORMAT: %q is neither text nor json", c.LogFormat))
	}
	if c.BinDir == "" || c.DataDir == "" || c.GatewayAddr == "" {
		errs = append(errs, errors.New("BIN_DIR, DATA_DIR and GATEWAY_ADDR must not be empty"))
	}
	if c.DatabaseRoles && c.DatabaseURL != "" {
		if _, err := pg.WithUser(c.DatabaseURL, pg.RoleOf(SchemaOf[Gateway])); err != nil {
			errs = append(errs, fmt.Errorf("DATABASE_URL: %w (or set DEV_DB_ROLES=false)", err))
		}
	}
	// The gateway refuses them too, but only once PostgreSQL and NATS are up: say it now.
	for _, s := range []struct{ name, value string }{{"ADMIN_TOKEN", c.Secrets.AdminToken},
		{"CRON_SECRET", c.Secrets.CronSecret}, {"IDEMPOTENCY_SECRET", c.Secrets.IdempotencySecret}} {
		if s.value != "" && len(s.value) < MinSecretBytes {
			errs = append(errs, fmt.Errorf("%s is %d bytes long; the gateway needs at least %d (unset it to use a generated one)",
				s.name, len(s.value), MinSecretBytes))
		}
	}
	return errors.Join(errs...)
}
