package devstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
)

// startShell starts `sh -c script` as child name under a fresh supervisor writing to out.
func startShell(t *testing.T, out *testkit.Buffer, name, script string) *Supervisor {
	t.Helper()
	sup := NewSupervisor(NewOutput(out, nameWidth(Single)), testLogger(out))
	if err := sup.Start(name, "/bin/sh", []string{"-c", script}, os.Environ()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Stop(time.Second, nil) })
	return sup
}

func TestSupervisorPrefixesEveryLine(t *testing.T) {
	t.Parallel()
	out := &testkit.Buffer{}
	sup := startShell(t, out, "pool", `printf 'one\ntwo\n'; printf 'oops\n' >&2; printf 'no newline'; exec sleep 30`)
	waitFor(t, 10*time.Second, contains(out,
		"pool               | one\n", "pool               | two\n", "pool               | oops\n"))
	sup.Stop(5*time.Second, nil)
	if err := contains(out, "pool               | no newline\n")(); err != nil {
		t.Fatal(err) // flushed when the child ended
	}
	select {
	case e := <-sup.Exits():
		t.Fatalf("a stopped child was reported as an unexpected exit: %+v", e)
	default:
	}
}

func TestSupervisorStopSendsSIGTERM(t *testing.T) {
	t.Parallel()
	out := &testkit.Buffer{}
	sup := startShell(t, out, "merchant",
		`trap 'echo "got TERM"; exit 0' TERM; echo started; while :; do sleep 0.05; done`)
	waitFor(t, 10*time.Second, contains(out, "merchant           | started"))
	begin := time.Now()
	sup.Stop(20*time.Second, nil)
	if took := time.Since(begin); took > 10*time.Second {
		t.Fatalf("Stop took %s: SIGTERM not delivered?", took)
	}
	if err := contains(out, "merchant           | got TERM")(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "killing") {
		t.Fatalf("child killed although it stopped on SIGTERM:\n%s", out)
	}
}

func TestSupervisorKillsChildThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	out := &testkit.Buffer{}
	sup := startShell(t, out, "pool", `trap '' TERM; echo started; while :; do sleep 0.05; done`)
	waitFor(t, 10*time.Second, contains(out, "pool               | started"))
	begin := time.Now()
	sup.Stop(300*time.Millisecond, nil)
	if took := time.Since(begin); took > 8*time.Second {
		t.Fatalf("Stop took %s", took)
	}
	if err := contains(out, "killing it")(); err != nil {
		t.Fatal(err)
	}
}

func TestSupervisorSignalsTheWholeProcessGroup(t *testing.T) {
	t.Parallel()
	out := &testkit.Buffer{}
	pidFile := filepath.Join(t.TempDir(), "pid")
	sup := startShell(t, out, "gateway", fmt.Sprintf(`sleep 300 & echo $! > %s; echo started; wait`, pidFile))
	waitFor(t, 10*time.Second, contains(out, "gateway            | started"))
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	sup.Stop(5*time.Second, nil)
	waitFor(t, 10*time.Second, func() error {
		if alive(pid) {
			return fmt.Errorf("grandchild %d still running", pid)
		}
		return nil
	})
}

// alive reports whether pid runs (a zombie waiting for init to reap it does not count).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

func TestSupervisorReportsUnexpectedExit(t *testing.T) {
	t.Parallel()
	out := &testkit.Buffer{}
	sup := startShell(t, out, "payment-projection", `echo bye; exit 3`)
	e := testkit.Receive(t, sup.Exits(), 10*time.Second, "exit reported")
	var exit *exec.ExitError
	if e.Name != "payment-projection" || !errors.As(e.Err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit: %+v", e)
	}
	if err := contains(out, "payment-projection | bye", "exited unexpectedly")(); err != nil {
		t.Fatal(err)
	}
}

func TestMissingBinariesListsAbsentAndNonExecutableServices(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gateway"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pool"), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := MissingBinaries(dir, Services)
	want := []string{"merchant", "pool", "payment-projection", "webhook-dispatcher"}
	if !slices.Equal(got, want) {
		t.Fatalf("missing = %v, want %v", got, want)
	}
}

func TestLineWriterSplitsChunks(t *testing.T) {
	t.Parallel()
	out := &testkit.Buffer{}
	w := NewOutput(out, 4).Prefixed("ab")
	for _, chunk := range []string{"he", "llo\nwor", "ld\n\nlast"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	want := "ab   | hello\nab   | world\nab   | \nab   | last\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}
