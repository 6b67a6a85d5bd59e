// Package pglocal finds and runs the machine's PostgreSQL for a cluster of our own: the dev
// stack's (services/devstack) and the tests' (pkg/testkit). PostgreSQL refuses to run as root,
// so as root the cluster runs as the postgres user, which must be able to reach its directory.
package pglocal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// BinDir finds the directory of initdb and pg_ctl: PG_BINDIR; else, when dataDir holds a cluster, the Debian directory
// of its major version (/usr/lib/postgresql/<PG_VERSION>/bin), so that an upgrade of the
// machine's default PostgreSQL does not strand it; else initdb on PATH; else the newest
// /usr/lib/postgresql/<version>/bin.
func BinDir(dataDir string) (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	if v, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		d := filepath.Join("/usr/lib/postgresql", strings.TrimSpace(string(v)), "bin")
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
		return filepath.Dir(p), nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return "", errors.New("PostgreSQL binaries (initdb, pg_ctl) not found: install PostgreSQL or set PG_BINDIR")
	}
	slices.SortFunc(matches, func(a, b string) int { return majorOf(a) - majorOf(b) })
	return filepath.Dir(matches[len(matches)-1]), nil
}

// majorOf reads the version out of /usr/lib/postgresql/<version>/bin/initdb.
func majorOf(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// Credential returns nil unless running as root. PostgreSQL refuses to run as root, so
// then it returns the postgres user's credential, gives dir to that user and checks that the
// user can reach dir at all.
func Credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	groups := []uint32{uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			g, _ := strconv.Atoi(id)
			groups = append(groups, uint32(g))
		}
	}
	if err := checkReachable(dir, uint32(uid), groups); err != nil {
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// checkReachable reports an error naming the first directory above dir that the user uid
// (with groups) may not enter. It reads plain permission bits and ignores ACLs.
func checkReachable(dir string, uid uint32, groups []uint32) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		perm := fi.Mode().Perm()
		var can bool
		switch {
		case st.Uid == uid:
			can = perm&0o100 != 0
		case slices.Contains(groups, st.Gid):
			can = perm&0o010 != 0
		default:
			can = perm&0o001 != 0
		}
		if !can {
			return fmt.Errorf("running as root, PostgreSQL runs as user postgres, which cannot enter %s (mode %s): "+
				"use a directory it can reach, or chmod o+x that one", d, perm)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
