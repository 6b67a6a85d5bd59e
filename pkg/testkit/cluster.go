package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

var (
	clusterMu  sync.Mutex
	clusterDir string
	clusterCtl string
)

// PostgresBinDir finds the directory of the machine's initdb and pg_ctl: PG_BINDIR, then PATH,
// then /usr/lib/postgresql/<newest>/bin.
func PostgresBinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
		return filepath.Dir(p), nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return "", fmt.Errorf("initdb not found: install PostgreSQL or set DATABASE_URL")
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}

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
	cred, err := dropRootCredential(dir)
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
	cred, _ := dropRootCredential(clusterDir)
	cmd := exec.Command(clusterCtl, "-D", filepath.Join(clusterDir, "data"), "-m", "immediate", "stop")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	_ = cmd.Run()
	_ = os.RemoveAll(clusterDir)
	clusterDir = ""
}

// dropRootCredential returns the postgres user's credential when running as root (and hands
// dir to it), nil otherwise.
func dropRootCredential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
