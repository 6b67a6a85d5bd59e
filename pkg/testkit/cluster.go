package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/payplat/platform/pkg/pglocal"
)

var (
	clusterMu  sync.Mutex
	clusterDir string
	clusterCtl string
)

// PostgresBinDir finds the directory of the machine's initdb and pg_ctl (pglocal.BinDir).
func PostgresBinDir() (string, error) { return pglocal.BinDir("") }

// startTempCluster initialises and starts a throw-away PostgreSQL cluster on a free loopback
// port with trust authentication. PostgreSQL refuses to run as root, so as root it runs as the
// postgres user.
func startTempCluster() (string, error) {
	clusterMu.Lock()
	defer clusterMu.Unlock()
	bin, err := PostgresBinDir()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "payplat-pg-")
	if err != nil {
		return "", err
	}
	port, err := FreePortRange(1)
	if err != nil {
		return "", err
	}
	cred, err := pglocal.Credential(dir)
	if err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) error {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w: %s", name, err, out)
		}
		return nil
	}
	if err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"); err != nil {
		return "", err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400", port, dir)
	if err := run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "start"); err != nil {
		return "", err
	}
	clusterDir, clusterCtl = dir, filepath.Join(bin, "pg_ctl")
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), nil
}

func stopTempCluster() {
	clusterMu.Lock()
	defer clusterMu.Unlock()
	if clusterDir == "" {
		return
	}
	cred, _ := pglocal.Credential(clusterDir)
	cmd := exec.Command(clusterCtl, "-D", filepath.Join(clusterDir, "data"), "-m", "immediate", "stop")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	_ = cmd.Run()
	_ = os.RemoveAll(clusterDir)
	clusterDir = ""
}
