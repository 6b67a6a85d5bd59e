package testkit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Test and template databases carry the id of the process that made them (pptest_<pid>_…,
// pptpl_<pid>_…). A test binary that is killed (a -timeout panic, a SIGKILL) cannot drop its
// databases, so each test process first drops those of processes that no longer run, on a
// server of this machine (elsewhere a process id says nothing). This assumes the test
// processes that share the server share this machine's process ids too, as `make test` and CI
// do; test containers with process namespaces of their own must use a non-local DATABASE_URL,
// which turns the sweep off.
var (
	orphanOnce    sync.Once
	orphanPattern = regexp.MustCompile(`^pp(?:test|tpl)_([0-9]+)_[0-9a-f]+$`)
)

// dropOrphans drops, once per process, the test and template databases of dead processes.
func dropOrphans(admin string) {
	orphanOnce.Do(func() {
		if !localServer(admin) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = dropDatabasesOfDeadProcesses(ctx, admin)
	})
}

// dropDatabasesOfDeadProcesses drops the databases named after a process id that no process
// of this machine has now, and returns their names.
func dropDatabasesOfDeadProcesses(ctx context.Context, admin string) ([]string, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'pp%'`)
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	conn.Close(ctx)
	if err != nil {
		return nil, err
	}
	var dropped []string
	var errs []error
	for _, name := range names {
		m := orphanPattern.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || processRuns(pid) {
			continue
		}
		if err := dropDatabase(ctx, admin, name); err != nil {
			errs = append(errs, fmt.Errorf("dropping %s: %w", name, err))
			continue
		}
		dropped = append(dropped, name)
	}
	return dropped, errors.Join(errs...)
}

// processRuns reports whether a process with this id exists on this machine.
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// localServer reports whether the server of the connection string runs on this machine.
func localServer(dsn string) bool {
	u, err := url.Parse(dsn)
	if err != nil {
		return false
	}
	switch h := u.Hostname(); h {
	case "", "localhost", "127.0.0.1", "::1":
		return true
	default:
		return false
	}
}
