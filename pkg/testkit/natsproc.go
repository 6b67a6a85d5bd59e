package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
)

// NATSProcess runs a JetStream-enabled nats-server as its own process, built from the module the
// platform uses (the go build cache makes every build after the first a link), on a free
// loopback port with its store in a temporary directory, until the test ends. It returns the
// client URL and the process id. Benchmarks use it instead of NATS where the server sharing the
// test's process would distort what they measure (its heap scanned by the test's garbage
// collector, its goroutines on the test's scheduler): in production it is a process of its own.
func NATSProcess(tb testing.TB) (string, int) {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "nats-server")
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		tb.Fatalf("finding the workspace: %v", err)
	}
	build := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	if work := strings.TrimSpace(string(out)); work != "" && work != "off" {
		build.Dir = filepath.Join(filepath.Dir(work), "pkg")
	}
	if b, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building nats-server: %v: %s", err, b)
	}
	return RunNATSServer(tb, bin)
}

// RunNATSServer runs the nats-server binary bin with JetStream on a free loopback port, its
// store in a temporary directory, until the test ends (the kernel stops it should the test
// process die first), and returns its client URL and process id once it accepts connections.
func RunNATSServer(tb testing.TB, bin string) (string, int) {
	tb.Helper()
	return runNATSServer(tb, bin, nil, natsx.Client{})
}

// RunAuthNATSServer is RunNATSServer with authorization: only natsauth's users may connect, each
// with its permissions. It returns the users' keys (seeds in a temporary directory) too.
func RunAuthNATSServer(tb testing.TB, bin string) (string, natsauth.Keys, int) {
	tb.Helper()
	keys, err := natsauth.EnsureKeys(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	conf := filepath.Join(tb.TempDir(), "auth.conf")
	if err := os.WriteFile(conf, []byte(natsauth.ServerConfig(natsauth.Literal(keys.Public))), 0o600); err != nil {
		tb.Fatal(err)
	}
	url, pid := runNATSServer(tb, bin, []string{"-c", conf},
		natsx.Client{Name: "testkit", Creds: keys.SeedFile(natsauth.Operator)})
	return url, keys, pid
}

func runNATSServer(tb testing.TB, bin string, args []string, probe natsx.Client) (string, int) {
	tb.Helper()
	port := FreePorts(tb, 1)
	cmd := exec.Command(bin, append(args, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", tb.TempDir())...)
	cmd.Env = natsx.ServerEnv(os.Environ())
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting nats-server: %v", err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	WaitFor(tb, 30*time.Second, 20*time.Millisecond, func() error {
		nc, err := probe.Connect(url)
		if err != nil {
			return err
		}
		nc.Close()
		return nil
	})
	return url, cmd.Process.Pid
}
