package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv names the helper a test binary was started to be (StartHelper).
const helperEnv = "TESTKIT_HELPER"

var (
	helpersMu sync.Mutex
	helpers   = map[string]func() int{}
)

// RegisterHelper registers fn as the helper process called name: a test starts it with
// StartHelper, and Main runs fn instead of the tests in that process, exiting with its code.
// Tests that must really kill a component (SIGKILL: no deferred cleanup, no graceful close)
// run the component in a helper and kill it there. Call it from an init function.
func RegisterHelper(name string, fn func() int) {
	helpersMu.Lock()
	defer helpersMu.Unlock()
	helpers[name] = fn
}

// runHelper runs the helper this process was started as, if any.
func runHelper() (int, bool) {
	name := os.Getenv(helperEnv)
	if name == "" {
		return 0, false
	}
	helpersMu.Lock()
	fn, ok := helpers[name]
	helpersMu.Unlock()
	if !ok {
		fmt.Fprintf(os.Stderr, "testkit: no helper %q registered\n", name)
		return 2, true
	}
	return fn(), true
}

// StartHelper starts this test binary again as the helper called name, with env added to the
// environment, its output going to the test log. The kernel kills it should the test process
// die first.
func StartHelper(t testing.TB, name string, env ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+name), env...)
	cmd.Stdout, cmd.Stderr = tLogWriter{t}, tLogWriter{t}
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// WaitKilled waits up to timeout for a helper to die of SIGKILL, and fails the test if it
// exited otherwise or lived on.
func WaitKilled(t testing.TB, cmd *exec.Cmd, timeout time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("helper ended with %v, want death by SIGKILL", err)
		}
		if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("helper ended with %v, want death by SIGKILL", err)
		}
	case <-time.After(timeout):
		t.Fatalf("helper still running after %s", timeout)
	}
}

// KillSelf kills the current process with SIGKILL, at once: nothing deferred runs, no
// connection is closed politely, as when the machine or the orchestrator kills it.
func KillSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never returns
}

type tLogWriter struct{ t testing.TB }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Logf("helper: %s", p)
	return len(p), nil
}
