package devstack

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/testkit"
)

// fakeStack returns a Config whose service binaries are the test binary acting as fake
// services, on free ports, with an external (unused) DATABASE_URL and the embedded NATS.
func fakeStack(t *testing.T, extraEnv ...string) Config {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range Services {
		if err := os.Symlink(self, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := mustLoadConfig(t, map[string]string{"LOG_LEVEL": "debug"})
	cfg.BinDir = bin
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = "postgres://fake@127.0.0.1:1/payplat" // the fakes never connect
	cfg.DatabaseRoles = false                               // nor is there a database to lay out
	cfg.GatewayAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.HealthPortBase = testkit.FreePorts(t, len(Services))
	cfg.NATSPort = freePort(t)
	cfg.CronInterval = 20 * time.Millisecond
	cfg.ReadyTimeout = time.Minute
	cfg.StopTimeout = 10 * time.Second
	cfg.ExtraEnv = append([]string{fakeServiceEnv + "=1"}, extraEnv...)
	return cfg
}

func TestRunBringsTheStackUpAndDown(t *testing.T) {
	cfg := fakeStack(t)
	credsPath := filepath.Join(cfg.DataDir, CredentialsFile)

	for run := 1; run <= 2; run++ {
		out := &testkit.Buffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, cfg, out) }()

		waitFor(t, time.Minute, contains(out, "payplat dev stack ready", "gateway            | cron called"))
		// The banner names the dashboard and how to sign in (issue 18).
		if err := contains(out, "dashboard: http://"+cfg.GatewayAddr+"/dashboard/", "jq -r .keys.sk_test")(); err != nil {
			t.Fatal(err)
		}
		creds, err := ReadCredentials(credsPath)
		if err != nil {
			t.Fatal(err)
		}
		if creds.Company == nil || creds.Company.ID != "cmp_fake" || creds.Keys == nil || creds.Keys.SKTest != "sk_test_fake" ||
			creds.GatewayURL != "http://"+cfg.GatewayAddr || creds.NATSURL != fmt.Sprintf("nats://127.0.0.1:%d", cfg.NATSPort) ||
			creds.DatabaseURL != cfg.DatabaseURL || creds.AdminToken == "" || creds.CronSecret == "" || len(creds.Health) != 5 {
			t.Fatalf("run %d: credentials: %+v", run, creds)
		}
		if fi, err := os.Stat(credsPath); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("credentials file: %v, %v", fi, err)
		}
		// The embedded NATS answers while the stack runs.
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.NATSPort)); err != nil {
			t.Fatalf("embedded NATS: %v", err)
		} else {
			c.Close()
		}

		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: Run after Ctrl-C: %v\n%s", run, err, out)
			}
		case <-time.After(time.Minute):
			t.Fatalf("run %d: Run did not return after cancel:\n%s", run, out)
		}
		for _, name := range Services {
			if err := contains(out, fmt.Sprintf("%-18s | stopped %s on SIGTERM", name, name))(); err != nil {
				t.Fatalf("run %d: %v", run, err)
			}
		}
		created := strings.Count(out.String(), "company created: Demo Company")
		if want := map[int]int{1: 1, 2: 0}[run]; created != want {
			t.Fatalf("run %d created %d companies, want %d:\n%s", run, created, want, out)
		}
		// Everything is closed again: the next run can listen on the same ports.
		if err := checkPortsFree((&stack{cfg: cfg}).listenAddrs()); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

func TestRunStopsEverythingWhenAServiceDies(t *testing.T) {
	cfg := fakeStack(t, "FAKE_CRASH=pool")
	out := &testkit.Buffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := Run(ctx, cfg, out)
	if err == nil || !strings.Contains(err.Error(), "pool exited unexpectedly") {
		t.Fatalf("Run = %v\n%s", err, out)
	}
	// The others may not have installed their SIGTERM handler yet: stopped either way.
	if err := contains(out, "pool               | crashing on purpose", "msg=stopped service=gateway")(); err != nil {
		t.Fatal(err)
	}
	if err := checkPortsFree((&stack{cfg: cfg}).listenAddrs()); err != nil {
		t.Fatal(err)
	}
}

func TestRunReportsMissingBinaries(t *testing.T) {
	cfg := fakeStack(t)
	if err := os.Remove(filepath.Join(cfg.BinDir, "merchant")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cfg.BinDir, "webhook-dispatcher")); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), cfg, &testkit.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "missing") ||
		!strings.Contains(err.Error(), "merchant, webhook-dispatcher") {
		t.Fatalf("Run = %v", err)
	}
}

func TestRunReportsBusyPorts(t *testing.T) {
	cfg := fakeStack(t)
	l, err := net.Listen("tcp", cfg.GatewayAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = Run(context.Background(), cfg, &testkit.Buffer{})
	if err == nil || !strings.Contains(err.Error(), cfg.GatewayAddr) {
		t.Fatalf("Run = %v", err)
	}
}

func TestRunWithTheLocalPostgres(t *testing.T) {
	cfg := fakeStack(t)
	cfg.DatabaseURL = ""
	cfg.DatabaseRoles = true
	cfg.DataDir = pgTestDir(t)
	cfg.PostgresPort = freePort(t)
	out := &testkit.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, out) }()
	waitFor(t, 2*time.Minute, contains(out, "payplat dev stack ready"))

	creds, err := ReadCredentials(filepath.Join(cfg.DataDir, CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/payplat?sslmode=disable", cfg.PostgresPort)
	if creds.DatabaseURL != want {
		t.Fatalf("database_url = %q, want %q", creds.DatabaseURL, want)
	}
	execSQL(t, ctx, creds.DatabaseURL, "SELECT 1") // the payplat database exists
	// laid out for the services' own roles (pg.Roles)
	conn, err := pgx.Connect(ctx, creds.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	var owner string
	err = conn.QueryRow(ctx, `SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'webhooks'`).Scan(&owner)
	conn.Close(ctx)
	if err != nil || owner != "payplat_webhooks" {
		t.Fatalf("schema webhooks is owned by %q (%v), want payplat_webhooks", owner, err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	if err := contains(out, "stopping PostgreSQL")(); err != nil {
		t.Fatal(err)
	}
	probeCtx, cancelProbe := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelProbe()
	if conn, err := pgx.Connect(probeCtx, creds.DatabaseURL); err == nil {
		conn.Close(probeCtx)
		t.Fatal("PostgreSQL still answers after the stack stopped")
	}
}

// `make run CLUSTER=1`: three nats-server processes forming a JetStream cluster that takes
// streams with 3 replicas, two replicas of every service on their own ports (two gateways, both
// in the credentials file), and everything stopped again on Ctrl-C.
func TestRunInClusterModeStartsThreeNATSNodesAndTwoReplicasOfEachService(t *testing.T) {
	cfg := fakeStack(t)
	cfg.Cluster = true
	cfg.HealthPortBase = testkit.FreePorts(t, 15)
	cfg.GatewayAddr = fmt.Sprintf("127.0.0.1:%d", testkit.FreePorts(t, 11))
	cfg.NATSPort = testkit.FreePorts(t, 3)
	natsServer := filepath.Join(cfg.BinDir, "nats-server")
	build := exec.Command("go", "build", "-o", natsServer, "github.com/nats-io/nats-server/v2")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	out := &testkit.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, out) }()
	waitFor(t, 2*time.Minute, contains(out, "payplat dev stack ready", "cluster: 3 NATS nodes"))
	creds, err := ReadCredentials(filepath.Join(cfg.DataDir, CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(creds.GatewayURLs) != 2 || creds.GatewayURLs[0] == creds.GatewayURLs[1] || len(creds.Health) != 10 ||
		strings.Count(creds.NATSURL, "nats://") != 3 {
		t.Fatalf("credentials: %+v", creds)
	}
	for _, name := range []string{"gateway-1", "gateway-2", "webhook-dispatcher-2"} {
		if err := contains(out, fmt.Sprintf("%-20s | starting", name))(); err != nil {
			t.Fatal(err)
		}
	}
	// Its NATS has authorization on: no anonymous client, the operator's key from the
	// credentials file's directory.
	if anon, err := nats.Connect(creds.NATSURL, nats.MaxReconnects(0)); err == nil {
		anon.Close()
		t.Fatal("the cluster's NATS took a client without credentials")
	}
	// The cluster takes a stream with three replicas.
	nc, err := OperatorClient("test", &natsauth.Keys{Dir: creds.NATSKeys}).Connect(creds.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3}); err != nil {
		t.Fatalf("a stream with 3 replicas: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	if err := checkPortsFree((&stack{cfg: cfg}).listenAddrs()); err != nil {
		t.Fatal(err)
	}
}
