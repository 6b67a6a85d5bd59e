package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/payplat/platform/pkg/logx"
	"github.com/payplat/platform/pkg/natsauth"
)

// errInterrupted ends a start that a signal cut short: not a failure.
var errInterrupted = errors.New("interrupted")

// Run brings the stack up in the foreground, keeps it running until ctx is done (Ctrl-C,
// SIGTERM) or a service exits on its own, then takes it down in order: services, NATS,
// PostgreSQL. It returns nil after a requested shutdown and an error when the stack could
// not start or a service died. Everything, the children's output included, goes to stdout.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	out := NewOutput(stdout, nameWidth(cfg.Topology()))
	s := &stack{
		cfg:  cfg,
		out:  out,
		log:  logx.New(logx.FormatText, cfg.LogLevel, out.Prefixed("devstack")),
		http: &http.Client{Timeout: 30 * time.Second},
	}
	err := s.run(ctx)
	if errors.Is(err, errInterrupted) {
		return nil
	}
	return err
}

type stack struct {
	cfg  Config
	out  *Output
	log  *slog.Logger
	http *http.Client
}

func (s *stack) run(ctx context.Context) error {
	if missing := MissingBinaries(s.cfg.BinDir, s.programs()); len(missing) > 0 {
		return fmt.Errorf("binaries missing from %s: %s (build them with `make build`, or use `make run`)",
			s.cfg.BinDir, strings.Join(missing, ", "))
	}
	dataDir, err := filepath.Abs(s.cfg.DataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if err := checkPortsFree(s.listenAddrs()); err != nil {
		return err
	}
	secrets, err := LoadSecrets(dataDir, s.cfg.Secrets)
	if err != nil {
		return err
	}
	r := Resolved{DataDir: dataDir, Secrets: secrets}

	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	if r.DatabaseURL, err = s.startPostgres(ctx, dataDir, &stops); err != nil {
		return err
	}
	if s.cfg.DatabaseRoles {
		if err := PrepareDatabase(ctx, r.DatabaseURL); err != nil {
			return err
		}
	}
	if r.NATSKeys, err = s.natsKeys(dataDir); err != nil {
		return err
	}
	natsExits := make(<-chan Exit)
	if r.NATSURL, natsExits, err = s.startNATS(ctx, dataDir, r.NATSKeys, &stops); err != nil {
		return err
	}

	sup := NewSupervisor(s.out, s.log)
	defer func() {
		s.log.Info("stopping services")
		// Our idle keep-alive connections must not hold up their graceful shutdown.
		s.http.CloseIdleConnections()
		sup.Stop(s.cfg.StopTimeout, s.cfg.Hurry)
	}()
	for _, in := range s.cfg.Topology().Instances() {
		if err := sup.Start(in.Name, filepath.Join(s.cfg.BinDir, in.Service), nil, s.cfg.ChildEnvOf(os.Environ(), in, r)); err != nil {
			return err
		}
	}
	if err := s.untilReady(ctx, sup); err != nil {
		return err
	}
	credsPath, err := s.writeCredentials(ctx, dataDir, r)
	if err != nil {
		return err
	}
	s.banner(credsPath)

	stopCron := s.startCron(ctx, secrets.CronSecret)
	defer stopCron()
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
		return nil
	case exit := <-sup.Exits():
		return unexpectedExit(exit)
	case exit := <-natsExits:
		return unexpectedExit(exit)
	}
}

// programs are the binaries the stack runs from BIN_DIR: the services, and nats-server for its
// own cluster.
func (s *stack) programs() []string {
	if s.cfg.NATSURL == "" && s.cfg.Topology().NATSNodes > 1 {
		return append(append([]string{}, Services...), "nats-server")
	}
	return Services
}

// listenAddrs are the addresses the stack is about to listen on, checked up front so that a
// second stack (or services left over from a killed one) is reported clearly.
func (s *stack) listenAddrs() []string {
	var addrs []string
	for _, in := range s.cfg.Topology().Instances() {
		if in.Service == Gateway {
			addrs = append(addrs, s.cfg.GatewayAddrOf(in.Replica))
		}
		addrs = append(addrs, s.cfg.HealthAddrOf(in))
	}
	if s.cfg.NATSURL == "" {
		for i := range s.cfg.Topology().NATSNodes {
			addrs = append(addrs, net.JoinHostPort("127.0.0.1", fmt.Sprint(s.cfg.NATSClientPort(i))))
			if s.cfg.Topology().NATSNodes > 1 {
				addrs = append(addrs, net.JoinHostPort("127.0.0.1", fmt.Sprint(s.cfg.NATSClientPort(i)+natsRoutePortOffset)))
			}
		}
	}
	return addrs
}

func checkPortsFree(addrs []string) error {
	var busy []string
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			busy = append(busy, a)
			continue
		}
		_ = l.Close()
	}
	if len(busy) > 0 {
		return fmt.Errorf("address already in use: %s (is another dev stack running, or services left over from one?)",
			strings.Join(busy, ", "))
	}
	return nil
}

func (s *stack) startPostgres(ctx context.Context, dataDir string, stops *[]func()) (string, error) {
	if s.cfg.DatabaseURL != "" {
		s.log.Info("using the PostgreSQL of DATABASE_URL")
		return s.cfg.DatabaseURL, nil
	}
	pg, err := StartLocalPostgres(ctx, filepath.Join(dataDir, "pg"), s.cfg.PostgresPort, s.log)
	if err != nil {
		return "", err
	}
	*stops = append(*stops, func() {
		s.log.Info("stopping PostgreSQL")
		if err := pg.Stop(); err != nil {
			s.log.Error("stopping PostgreSQL", "error", err)
		}
	})
	return pg.URL(Database), nil
}

// natsKeys are the seeds of the NATS users: the stack's own (kept in DEV_NATS_KEYS, default
// $DATA_DIR/nats-keys, made on the first run) when it runs its NATS, those DEV_NATS_KEYS
// holds for the server of NATS_URL, or none for a NATS_URL without authorization.
func (s *stack) natsKeys(dataDir string) (*natsauth.Keys, error) {
	dir := s.cfg.NATSKeysDir
	if s.cfg.NATSURL != "" {
		if dir == "" {
			return nil, nil
		}
		k, err := natsauth.LoadKeys(dir)
		return &k, err
	}
	if dir == "" {
		dir = filepath.Join(dataDir, "nats-keys")
	}
	k, err := natsauth.EnsureKeys(dir)
	return &k, err
}

// startNATS starts the stack's own NATS unless NATS_URL names one: an embedded server, or in
// cluster mode three nats-server processes (their exits are reported on the returned channel).
// Its users are natsauth's, with keys.
func (s *stack) startNATS(ctx context.Context, dataDir string, keys *natsauth.Keys, stops *[]func()) (string, <-chan Exit, error) {
	if s.cfg.NATSURL != "" {
		s.log.Info("using the NATS server of NATS_URL", "url", s.cfg.NATSURL)
		return s.cfg.NATSURL, nil, nil
	}
	if n := s.cfg.Topology().NATSNodes; n > 1 {
		sup := NewSupervisor(s.out, s.log)
		*stops = append(*stops, func() {
			s.log.Info("stopping NATS")
			sup.Stop(s.cfg.StopTimeout, s.cfg.Hurry)
		})
		if err := StartNATSCluster(ctx, s.cfg, sup, filepath.Join(dataDir, "nats-cluster"), keys, s.log); err != nil {
			return "", nil, err
		}
		return s.cfg.NATSURLs(), sup.Exits(), nil
	}
	n, err := StartEmbeddedNATS(filepath.Join(dataDir, "nats"), s.cfg.NATSPort, keys, s.log)
	if err != nil {
		return "", nil, err
	}
	*stops = append(*stops, func() {
		s.log.Info("stopping NATS")
		n.Stop()
	})
	return n.URL(), nil, nil
}

// untilReady waits for every service's /readyz while watching for a child that dies.
func (s *stack) untilReady(ctx context.Context, sup *Supervisor) error {
	var targets []Target
	for _, in := range s.cfg.Topology().Instances() {
		targets = append(targets, Target{Name: in.Name, URL: s.cfg.ReadyURLOf(in)})
	}
	s.log.Info("waiting for the services to be ready", "timeout", s.cfg.ReadyTimeout)
	readyCtx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- WaitReady(readyCtx, s.http, targets, 250*time.Millisecond) }()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return fmt.Errorf("%w (see the service's output above)", err)
		}
		return nil
	case exit := <-sup.Exits():
		cancel()
		<-done
		return unexpectedExit(exit)
	}
}

// writeCredentials makes sure the demo company exists and writes the credentials file.
func (s *stack) writeCredentials(ctx context.Context, dataDir string, r Resolved) (string, error) {
	path := filepath.Join(dataDir, CredentialsFile)
	creds, err := ReadCredentials(path)
	if err != nil {
		s.log.Warn("ignoring unreadable credentials file", "error", err)
		creds = Credentials{}
	}
	creds.GatewayURL, creds.GatewayURLs = s.cfg.GatewayURL(), s.cfg.GatewayURLs()
	creds.DatabaseURL, creds.NATSURL = r.DatabaseURL, r.NATSURL
	creds.NATSKeys = ""
	if r.NATSKeys != nil {
		creds.NATSKeys = r.NATSKeys.Dir
	}
	creds.AdminToken, creds.CronSecret = r.Secrets.AdminToken, r.Secrets.CronSecret
	creds.Health = map[string]string{}
	for _, in := range s.cfg.Topology().Instances() {
		creds.Health[in.Name] = s.cfg.ReadyURLOf(in)
	}
	admin := AdminClient{BaseURL: creds.GatewayURL, AdminToken: r.Secrets.AdminToken, HTTP: s.http}
	if err := EnsureCompany(ctx, admin, &creds, s.cfg.CompanyName, s.log); err != nil {
		if ctx.Err() != nil {
			return "", errInterrupted
		}
		return "", err
	}
	return path, WriteCredentials(path, creds)
}

func (s *stack) banner(credsPath string) {
	shown := filepath.Join(s.cfg.DataDir, CredentialsFile)
	if !filepath.IsAbs(shown) {
		shown = "./" + shown
	}
	gw := s.cfg.GatewayURL()
	shape := ""
	if t := s.cfg.Topology(); t.Replicas > 1 {
		shape = fmt.Sprintf("\n  cluster: %d NATS nodes (%s), %d replicas of each service, gateways %s",
			t.NATSNodes, s.cfg.NATSURLs(), t.Replicas, strings.Join(s.cfg.GatewayURLs(), " and "))
	}
	s.out.Print(fmt.Sprintf(`
  payplat dev stack ready: %s%s
  dashboard: %s/dashboard/  (sign in with the demo company's test secret key: jq -r .keys.sk_test %s)
  credentials (admin token, cron secret, demo company and its API keys): %s
  try:  curl -H "Authorization: Bearer $(jq -r .keys.sk_test %s)" %s/api/v1/management/whoami
  stop: Ctrl-C

`, gw, shape, gw, shown, credsPath, shown, gw))
}

// startCron calls the cron endpoint on a timer until the returned function is called.
func (s *stack) startCron(ctx context.Context, secret string) (stop func()) {
	if s.cfg.CronInterval == 0 {
		s.log.Info("cron calls off (DEV_CRON_INTERVAL=0)")
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		RunCron(ctx, s.http, s.cfg.GatewayURL()+CronPath, secret, s.cfg.CronInterval, s.log)
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

func unexpectedExit(e Exit) error {
	return fmt.Errorf("%s exited unexpectedly (%s); stack stopped", e.Name, exitStatus(e.Err))
}
