package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/devstack"
)

// Cluster is the platform as separate processes on this machine, in the shape of a
// devstack.Topology: a local PostgreSQL cluster, one nats-server or a JetStream cluster of
// three, and each service's replicas, on ports of their own, with their state and logs under
// one directory. The layout (ports, environment, NATS configuration) is the dev stack's.
type Cluster struct {
	dir    string
	binDir string
	events *Events
	cfg    devstack.Config
	res    devstack.Resolved

	pg        *devstack.LocalPostgres
	pgMu      sync.Mutex
	nats      []*proc
	instances []devstack.Instance
	services  map[string]*proc // by instance name
	http      *http.Client
}

// ClusterOptions place a Cluster.
type ClusterOptions struct {
	// Dir holds the cluster's state and logs (PostgreSQL must be able to enter it: mode 0755
	// up the path when running as root).
	Dir string
	// BinDir holds Programs.
	BinDir string
	// Topology is the shape (devstack.Single when zero).
	Topology devstack.Topology
	// ServiceEnv is added to every service's environment.
	ServiceEnv []string
}

// StartCluster starts PostgreSQL, NATS and the services, and returns once every service is
// ready.
func StartCluster(ctx context.Context, o ClusterOptions, ev *Events) (*Cluster, error) {
	if o.Topology.NATSNodes == 0 {
		o.Topology = devstack.Single
	}
	for _, sub := range []string{"logs", "nats"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	cfg, err := devstack.LoadConfig(map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "info"})
	if err != nil {
		return nil, err
	}
	cfg.Cluster = o.Topology == devstack.Cluster
	if err := placePorts(&cfg); err != nil {
		return nil, err
	}
	cfg.BinDir, cfg.DataDir = o.BinDir, o.Dir
	cfg.ExtraEnv = o.ServiceEnv
	c := &Cluster{dir: o.Dir, binDir: o.BinDir, events: ev, cfg: cfg, services: map[string]*proc{},
		instances: cfg.Topology().Instances(), http: &http.Client{Timeout: 10 * time.Second}}
	if err := c.startStorage(ctx); err != nil {
		c.Close()
		return nil, err
	}
	for _, in := range c.instances {
		p := newProc(in.Name, filepath.Join(o.BinDir, in.Service), nil, cfg.ChildEnvOf(os.Environ(), in, c.res),
			c.logPath(in.Name), ev)
		c.services[in.Name] = p
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

// placePorts gives the configuration free loopback ports: the gateways and health listeners in
// one block (replicas 10 apart), PostgreSQL after them, and the NATS nodes' client ports with
// their route ports 2000 above (devstack's layout).
func placePorts(cfg *devstack.Config) error {
	base, err := testkit.FreePortRange(25)
	if err != nil {
		return err
	}
	cfg.GatewayAddr = fmt.Sprintf("127.0.0.1:%d", base)
	cfg.HealthPortBase = base + 1
	cfg.PostgresPort = base + 20
	for range 100 {
		nats, err := testkit.FreePortRange(3)
		if err != nil {
			return err
		}
		if free(nats+2000, 3) {
			cfg.NATSPort = nats
			return nil
		}
	}
	return fmt.Errorf("no free ports for the NATS nodes and their routes")
}

func free(port, n int) bool {
	for p := port; p < port+n; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
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
	// NATS runs with authorization, as in the dev stack and the manifests: each service with
	// its own user's permissions only.
	keys, err := natsauth.EnsureKeys(filepath.Join(c.dir, "nats-keys"))
	if err != nil {
		return err
	}
	n := c.cfg.Topology().NATSNodes
	for i := range n {
		conf := filepath.Join(c.dir, devstack.NATSNodeName(i)+".conf")
		if err := os.WriteFile(conf, []byte(c.cfg.NATSNodeConfig(i, n, filepath.Join(c.dir, "nats"), &keys)), 0o644); err != nil {
			return err
		}
		p := newProc(devstack.NATSNodeName(i), filepath.Join(c.binDir, "nats-server"), []string{"-c", conf}, natsx.ServerEnv(os.Environ()),
			c.logPath(devstack.NATSNodeName(i)), c.events)
		c.nats = append(c.nats, p)
		if err := p.start(); err != nil {
			return err
		}
	}
	c.res = devstack.Resolved{DatabaseURL: pg.URL(devstack.Database), NATSURL: c.NATSURL(), DataDir: c.dir, Secrets: secrets,
		NATSKeys: &keys}
	// Each service logs in as its own role, as in the dev stack and the manifests.
	if c.cfg.DatabaseRoles {
		if err := devstack.PrepareDatabase(ctx, c.res.DatabaseURL); err != nil {
			return err
		}
	}
	return devstack.WaitJetStream(ctx, c.NATSURL(), &keys, time.Minute)
}

func (c *Cluster) logPath(name string) string { return filepath.Join(c.dir, "logs", name+".log") }

// ServiceLogs are the log files of the service instances.
func (c *Cluster) ServiceLogs() []string {
	var out []string
	for _, in := range c.instances {
		out = append(out, c.logPath(in.Name))
	}
	return out
}

// WaitReady waits until every service instance answers /readyz with 200.
func (c *Cluster) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var targets []devstack.Target
	for _, in := range c.instances {
		targets = append(targets, devstack.Target{Name: in.Name, URL: c.cfg.ReadyURLOf(in)})
	}
	return devstack.WaitReady(ctx, c.http, targets, 100*time.Millisecond)
}

// GatewayURLs are the gateways' base URLs.
func (c *Cluster) GatewayURLs() []string { return c.cfg.GatewayURLs() }

// DatabaseURL is the platform's database.
func (c *Cluster) DatabaseURL() string { return c.res.DatabaseURL }

// NATSURL is the NATS client URL: every node.
func (c *Cluster) NATSURL() string { return c.cfg.NATSURLs() }

// NATSClient is how the check connects to NATS: as the operator, who plays the internal
// publishers of every family and reads every stream.
func (c *Cluster) NATSClient(name string) natsx.Client {
	return devstack.OperatorClient(name, c.res.NATSKeys)
}

// NATSCreds is the operator's NATS_CREDS (for payplat-ctl).
func (c *Cluster) NATSCreds() string { return c.res.NATSKeys.SeedFile(natsauth.Operator) }

// AdminToken is the gateway's admin token.
func (c *Cluster) AdminToken() string { return c.res.Secrets.AdminToken }

// CronSecret is the Bearer secret of the cron endpoint.
func (c *Cluster) CronSecret() string { return c.res.Secrets.CronSecret }

// Instances lists the service processes.
func (c *Cluster) Instances() []devstack.Instance { return c.instances }

// Service returns the process of a service instance, by its name ("pool", or "pool-2" when
// services have replicas).
func (c *Cluster) Service(name string) *proc { return c.services[name] }

// ReplicasOf returns the instance names of a service.
func (c *Cluster) ReplicasOf(service string) []string {
	var out []string
	for _, in := range c.instances {
		if in.Service == service {
			out = append(out, in.Name)
		}
	}
	return out
}

// NATSNode returns the process of NATS node i.
func (c *Cluster) NATSNode(i int) *proc { return c.nats[i] }

// NATSNodes is the number of NATS nodes.
func (c *Cluster) NATSNodes() int { return len(c.nats) }

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
	for _, p := range c.nats {
		if err := p.ensureRunning(); err != nil {
			return err
		}
	}
	for _, p := range c.services {
		if err := p.ensureRunning(); err != nil {
			return err
		}
	}
	return c.WaitReady(ctx, 2*time.Minute)
}

// Crashes counts the times each process exited on its own.
func (c *Cluster) Crashes() map[string]int {
	out := map[string]int{}
	for _, p := range c.nats {
		out[p.name] = p.crashCount()
	}
	for name, p := range c.services {
		out[name] = p.crashCount()
	}
	return out
}

// Close stops everything: services, NATS, PostgreSQL.
func (c *Cluster) Close() {
	var wg sync.WaitGroup
	for _, p := range c.services {
		wg.Go(func() { p.close(10 * time.Second) })
	}
	wg.Wait()
	for _, p := range c.nats {
		p.close(10 * time.Second)
	}
	if c.pg != nil {
		c.pgMu.Lock()
		_ = c.pg.Stop()
		c.pgMu.Unlock()
	}
}
