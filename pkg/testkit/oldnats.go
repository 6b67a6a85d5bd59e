package testkit

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// OldNATSServer runs Debian's nats-server (2.9, older than the platform's minimum; this machine
// kind has it at /usr/sbin/nats-server) on a free port until the test ends and returns its URL.
// Without it the test is skipped, except under CI, where it fails.
func OldNATSServer(t testing.TB) string {
	t.Helper()
	const bin = "/usr/sbin/nats-server"
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), "v2.9") {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s 2.9 missing on this machine kind: %v %s", bin, err, out)
		}
		t.Skipf("no nats-server 2.9 at %s (%v %s)", bin, err, out)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", t.TempDir(), "-l", os.DevNull, "-ports_file_dir", dir)
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var url string
	WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			var ports struct{ Nats []string }
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && json.Unmarshal(b, &ports) == nil && len(ports.Nats) > 0 {
				url = ports.Nats[0]
				return nil
			}
		}
		return errors.New("the old nats-server has not written its ports file")
	})
	return url
}
