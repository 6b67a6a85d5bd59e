package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/devstack"
)

// Cluster is the platform as separate processes on this machine: a local PostgreSQL cluster, a
// nats-server with JetStream and the five services, each on its own ports, with their state and
// logs under one directory.
type Cluster struct {
	dir    string
	binDir string
	events *Events
	cfg    devstack.Config
	res    devstack.Resolved

	pg       *devstack.LocalPostgres
	pgMu     sync.Mutex
	nats     *proc
	services map[string]*proc
	http     *http.Client
}

// ClusterOptions place a Cluster.
type ClusterOptions struct {
	// Dir holds the cluster's state and logs (PostgreSQL must be able to enter it: mode 0755
	// up the path when running as root).
	Dir string
	// BinDir holds Programs.
	BinDir string
	// ServiceEnv is added to every service's environment.
	ServiceEnv []string
}

// NATSConfig is the nats-server configuration of the chaos cluster: the production settings
// that matter here (deploy/nats/config.yaml: 8 MiB payloads, JetStream on files).
const natsConfig = `listen: 127.0.0.1:%d
server_name: chaos
max_payload: 8388608
jetstream {
  store_dir: %q
}
`

// StartCluster starts PostgreSQL, NATS and the services, and returns once every service is
// ready.
func StartCluster(ctx context.Context, o ClusterOptions, ev *Events) (*Cluster, error) {
	for _, sub := range []string{"logs", "nats"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	cfg, err := devstack.LoadConfig(map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "info"})
	if err != nil {
		return nil, err
	}
	ports, err := testkit.FreePortRange(len(devstack.Services) + 2)
	if err != nil {
		return nil, err
	}
	cfg.BinDir, cfg.DataDir = o.BinDir, o.Dir
	cfg.GatewayAddr = fmt.Sprintf("127.0.0.1:%d", ports)
	cfg.HealthPortBase = ports + 1
	cfg.PostgresPort = ports + len(devstack.Services)
	cfg.NATSPort = ports + len(devstack.Services) + 1
	cfg.ExtraEnv = o.ServiceEnv
	c := &Cluster{dir: o.Dir, binDir: o.BinDir, events: ev, cfg: cfg, services: map[string]*proc{},
		http: &http.Client{Timeout: 10 * time.Second}}
	if err := c.startStorage(ctx); err != nil {
		c.Close()
		return nil, err
	}
	for _, name := range devstack.Services {
		p := newProc(name, filepath.Join(o.BinDir, name), nil, cfg.ChildEnv(os.Environ(), name, c.res),
			c.logPath(name), ev)
		c.services[name] = p
		if err := p.start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.WaitReady(ctx, 2*time.Minute); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) startStorage(ctx context.Context) error {
	secrets, err := devstack.LoadSecrets(c.dir, c.cfg.Secrets)
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(c.logPath("postgres-control"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	pg, err := devstack.StartLocalPostgres(ctx, filepath.Join(c.dir, "pg"), c.cfg.PostgresPort,
		slog.New(slog.NewTextHandler(logf, nil)))
	if err != nil {
		return err
	}
	c.pg = pg
	conf := filepath.Join(c.dir, "nats.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, natsConfig, c.cfg.NATSPort, filepath.Join(c.dir, "nats")), 0o644); err != nil {
		return err
	}
	c.nats = newProc("nats", filepath.Join(c.binDir, "nats-server"), []string{"-c", conf}, os.Environ(), c.logPath("nats"), c.events)
	if err := c.nats.start(); err != nil {
		return err
	}
	c.res = devstack.Resolved{DatabaseURL: pg.URL(devstack.Database), NATSURL: c.NATSURL(), DataDir: c.dir, Secrets: secrets}
	return nil
}

func (c *Cluster) logPath(name string) string { return filepath.Join(c.dir, "logs", name+".log") }

// WaitReady waits until every service answers /readyz with 200.
func (c *Cluster) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var targets []devstack.Target
	for _, name := range devstack.Services {
		targets = append(targets, devstack.Target{Name: name, URL: c.cfg.ReadyURL(name)})
	}
	return devstack.WaitReady(ctx, c.http, targets, 100*time.Millisecond)
}

// GatewayURL is the gateway's base URL.
func (c *Cluster) GatewayURL() string { return c.cfg.GatewayURL() }

// DatabaseURL is the platform's database.
func (c *Cluster) DatabaseURL() string { return c.res.DatabaseURL }

// NATSURL is the NATS server's client URL.
func (c *Cluster) NATSURL() string { return fmt.Sprintf("nats://127.0.0.1:%d", c.cfg.NATSPort) }

// AdminToken and CronSecret are the gateway's secrets.
func (c *Cluster) AdminToken() string { return c.res.Secrets.AdminToken }

// CronSecret is the Bearer secret of the cron endpoint.
func (c *Cluster) CronSecret() string { return c.res.Secrets.CronSecret }

// Service returns the process of a service.
func (c *Cluster) Service(name string) *proc { return c.services[name] }

// NATS returns the nats-server process.
func (c *Cluster) NATS() *proc { return c.nats }

// StopPostgresImmediately stops PostgreSQL the way a power cut would (no checkpoint).
func (c *Cluster) StopPostgresImmediately() error {
	c.pgMu.Lock()
	defer c.pgMu.Unlock()
	return c.pg.StopImmediate()
}

// StartPostgres starts PostgreSQL again (crash recovery included).
func (c *Cluster) StartPostgres(ctx context.Context) error {
	c.pgMu.Lock()
	defer c.pgMu.Unlock()
	return c.pg.Restart(ctx)
}

// EnsureUp brings every process back: PostgreSQL, NATS, and each service (thawed or started),
// then waits until all are ready.
func (c *Cluster) EnsureUp(ctx context.Context) error {
	c.pgMu.Lock()
	err := c.pg.Restart(ctx)
	c.pgMu.Unlock()
	if err != nil && err.Error() != "PostgreSQL is running" {
		return err
	}
	if err := c.nats.ensureRunning(); err != nil {
		return err
	}
	for _, name := range devstack.Services {
		if err := c.services[name].ensureRunning(); err != nil {
			return err
		}
	}
	return c.WaitReady(ctx, 2*time.Minute)
}

// Crashes counts the times each process exited on its own.
func (c *Cluster) Crashes() map[string]int {
	out := map[string]int{"nats": c.nats.crashCount()}
	for name, p := range c.services {
		out[name] = p.crashCount()
	}
	return out
}

// Close stops everything: services, NATS, PostgreSQL.
func (c *Cluster) Close() {
	for _, p := range c.services {
		p.close(10 * time.Second)
	}
	if c.nats != nil {
		c.nats.close(10 * time.Second)
	}
	if c.pg != nil {
		c.pgMu.Lock()
		_ = c.pg.Stop()
		c.pgMu.Unlock()
	}
}
