package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/testkit"
)

// The first stop signal ends the context at once; copies of it within the duplicate window
// (make and the process group both signal) do not hurry the stop; a later one does.
func TestStopSignalsTellARepeatedStopFromAHurry(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 8)
	out := &testkit.Buffer{}
	ctx, hurry := StopSignals(context.Background(), sigs, out)
	sigs <- syscall.SIGTERM
	sigs <- syscall.SIGTERM
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	select {
	case <-hurry:
		t.Fatal("copies of the first SIGTERM hurried the stop")
	case <-time.After(DuplicateSignalWindow + 100*time.Millisecond):
	}
	sigs <- syscall.SIGINT
	select {
	case <-hurry:
	case <-time.After(10 * time.Second):
		t.Fatal("a later Ctrl-C did not hurry the stop")
	}
	if err := contains(out, "stopping (services, then NATS, then PostgreSQL)", "interrupt again: killing the services")(); err != nil {
		t.Fatal(err)
	}
}

// devstackProcess runs this test binary as the devstack command with fake services and the
// local PostgreSQL, until it prints that the stack is ready; it returns the process, its output
// and the database URL.
func devstackProcess(t *testing.T) (*exec.Cmd, *testkit.Buffer, string) {
	t.Helper()
	cfg := fakeStack(t)
	dataDir := pgTestDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), mainHelperEnv+"=1",
		"BIN_DIR="+cfg.BinDir, "DATA_DIR="+dataDir, "DATABASE_URL=", "NATS_URL=",
		"GATEWAY_ADDR="+cfg.GatewayAddr, fmt.Sprintf("DEV_HEALTH_PORT_BASE=%d", cfg.HealthPortBase),
		fmt.Sprintf("DEV_NATS_PORT=%d", cfg.NATSPort), fmt.Sprintf("DEV_PG_PORT=%d", freePort(t)),
		"DEV_CRON_INTERVAL=0", "DEV_STOP_TIMEOUT=10s")
	out := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("devstack output:\n%s", out)
		}
	})
	waitFor(t, 2*time.Minute, contains(out, "payplat dev stack ready"))
	creds, err := ReadCredentials(filepath.Join(dataDir, CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	return cmd, out, creds.DatabaseURL
}

// postgresGone is a waitFor check that nothing answers at url any more.
func postgresGone(url string) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return nil
		}
		_ = conn.Close(ctx)
		return errors.New("PostgreSQL still answers")
	}
}

// A supervisor's SIGTERM often arrives twice (make forwards it, `timeout` and systemd signal the
// whole group): the dev stack still stops in order, exits 0 and leaves no PostgreSQL behind. It
// used to take the second signal for "die at once" and left PostgreSQL running.
func TestDevstackStoppedByARepeatedSIGTERMLeavesNoPostgres(t *testing.T) {
	t.Parallel()
	cmd, out, url := devstackProcess(t)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := testkit.Receive(t, done, 2*time.Minute, "stop of devstack"); err != nil {
		t.Fatalf("devstack exited with %v", err)
	}
	if err := postgresGone(url)(); err != nil {
		t.Fatal(err)
	}
	if err := contains(out, "stopping PostgreSQL", "stopped gateway on SIGTERM")(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "killing the services") {
		t.Fatal("a copy of the first SIGTERM was taken for a second request")
	}
}

// Even a dev stack killed with SIGKILL, which can clean nothing up, leaves no PostgreSQL behind:
// the kernel tells the server (a child with a parent-death signal) to stop.
func TestDevstackKilledLeavesNoPostgres(t *testing.T) {
	t.Parallel()
	cmd, _, url := devstackProcess(t)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitFor(t, time.Minute, postgresGone(url))
}
