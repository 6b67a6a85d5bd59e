package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/pglocal"
)

// Database is the name of the database the services share (one schema each).
const Database = "payplat"

// LocalPostgres is a PostgreSQL cluster kept under DATA_DIR/pg and run with the machine's
// PostgreSQL binaries: trust authentication, TCP on 127.0.0.1 only, no Unix socket (its path
// could exceed the socket path limit and its default directory may not be writable).
//
// The server runs as a child process of the dev stack (postgres itself, not daemonised by
// pg_ctl), with the kernel told to send it SIGINT, PostgreSQL's fast shutdown, should the dev
// stack die without stopping it: a dev stack killed with SIGKILL, or by a supervisor that gives
// up waiting, never leaves its PostgreSQL behind.
type LocalPostgres struct {
	dir  string // DATA_DIR/pg, absolute; the cluster is in dir/data, the server log in dir/postgres.log
	bin  string
	port int
	cred *syscall.Credential // the postgres user's, when running as root
	log  *slog.Logger
	// adopt: the server was already running when the stack started (left by a version of the
	// dev stack that daemonised it, or started by hand); it is stopped with pg_ctl.
	adopt bool

	server *exec.Cmd     // the running server (nil when adopted or stopped)
	exited chan struct{} // closed when server has exited
}

// StartLocalPostgres initialises the cluster in dir on first use, starts it on 127.0.0.1:port
// (or adopts a server already running on the cluster, on whatever port it has, and says so),
// and creates the Database if it is missing. Stop it with Stop.
func StartLocalPostgres(ctx context.Context, dir string, port int, log *slog.Logger) (*LocalPostgres, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	p := &LocalPostgres{dir: abs, port: port, log: log}
	if err := p.prepare(); err != nil {
		return nil, err
	}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	if err := ensureDatabase(ctx, p.URL("postgres"), Database); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

// URL returns the connection string of database db on the local server.
func (p *LocalPostgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.port, db)
}

// Adopted reports whether the server was already running when the stack started.
func (p *LocalPostgres) Adopted() bool { return p.adopt }

// stopWait bounds each step of a shutdown.
const stopWait = 60 * time.Second

// Stop shuts the server down in fast mode: sessions are disconnected, a checkpoint is written,
// data is safe.
func (p *LocalPostgres) Stop() error { return p.stop(syscall.SIGINT, "fast") }

// StopImmediate stops the server at once, without a checkpoint, as a power cut would (what
// `pg_ctl stop -m immediate` does): the next start runs crash recovery. For fault injection.
func (p *LocalPostgres) StopImmediate() error { return p.stop(syscall.SIGQUIT, "immediate") }

// Restart starts the server again after Stop or StopImmediate, on the same port.
func (p *LocalPostgres) Restart(ctx context.Context) error {
	if p.server != nil {
		return errors.New("PostgreSQL is running")
	}
	return p.start(ctx)
}

func (p *LocalPostgres) stop(sig syscall.Signal, mode string) error {
	if p.adopt {
		if err := p.run("pg_ctl", "stop", "-D", p.dataDir(), "-m", mode, "-w", "-t", "60"); err != nil {
			return fmt.Errorf("stopping PostgreSQL: %w", err)
		}
		p.adopt = false
		return nil
	}
	if p.server == nil {
		return nil
	}
	defer func() { p.server = nil }()
	_ = p.server.Process.Signal(sig)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopWait):
	}
	p.log.Warn("PostgreSQL did not stop in time; stopping it immediately", "mode", mode, "waited", stopWait)
	_ = p.server.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopWait):
		_ = p.server.Process.Kill()
		<-p.exited
		return fmt.Errorf("stopping PostgreSQL: killed after %s", 2*stopWait)
	}
}

func (p *LocalPostgres) dataDir() string { return filepath.Join(p.dir, "data") }
func (p *LocalPostgres) logFile() string { return filepath.Join(p.dir, "postgres.log") }

// prepare finds the binaries, hands dir to the postgres user when running as root and runs
// initdb unless the cluster exists.
func (p *LocalPostgres) prepare() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	var err error
	if p.cred, err = pglocal.Credential(p.dir); err != nil {
		return fmt.Errorf("%w (DATA_DIR chooses the directory; DATABASE_URL uses a server of your own)", err)
	}
	if p.bin, err = pglocal.BinDir(p.dataDir()); err != nil {
		return fmt.Errorf("%w, or set DATABASE_URL to a server of your own", err)
	}
	if _, err := os.Stat(filepath.Join(p.dataDir(), "PG_VERSION")); err == nil {
		return nil
	}
	p.log.Info("initialising PostgreSQL cluster", "dir", p.dataDir(), "bin", p.bin)
	return p.run("initdb", "-D", p.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale")
}

// start starts the server and waits until it accepts connections, or adopts a server already
// running on the cluster, with a warning that says which.
func (p *LocalPostgres) start(ctx context.Context) error {
	running, err := p.running()
	if err != nil {
		return err
	}
	if running {
		pid, port, err := p.pidFile()
		if err == nil {
			p.port = port
		}
		p.adopt = true
		p.log.Warn("PostgreSQL was already running on this data directory (left by an earlier run, or started by hand); "+
			"using it, and stopping it when this stack stops", "pid", pid, "port", p.port, "data", p.dataDir())
		return nil
	}
	logf, err := os.OpenFile(p.logFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(filepath.Join(p.bin, "postgres"), "-D", p.dataDir(), "-p", strconv.Itoa(p.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200")
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C in the terminal reaches only the dev stack, which stops
	// the server after the services. Pdeathsig: it stops (fast) should the dev stack die.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
	p.log.Info("starting PostgreSQL", "addr", fmt.Sprintf("127.0.0.1:%d", p.port), "log", p.logFile())
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting PostgreSQL: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.server, p.exited = cmd, exited
	if err := p.waitAccepting(ctx); err != nil {
		_ = p.stop(syscall.SIGQUIT, "immediate")
		return fmt.Errorf("starting PostgreSQL: %w\n--- %s (last lines) ---\n%s", err, p.logFile(), tail(p.logFile(), 15))
	}
	return nil
}

// waitAccepting polls until the server accepts connections (crash recovery included), it
// exits, or stopWait passes.
func (p *LocalPostgres) waitAccepting(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	for {
		err := p.answersItself(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return errors.New("the server exited")
		case <-ctx.Done():
			return fmt.Errorf("not accepting connections: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// running asks pg_ctl whether a server runs on the data directory: its status command exits
// 0 when one does and 3 when none does (a stale postmaster.pid included).
func (p *LocalPostgres) running() (bool, error) {
	err := p.run("pg_ctl", "status", "-D", p.dataDir())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		return false, nil
	default:
		return false, fmt.Errorf("checking PostgreSQL status: %w", err)
	}
}

// answersItself checks that the server on the port is this cluster's: another server holding
// the port would answer while ours fails to bind it.
func (p *LocalPostgres) answersItself(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var dir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return err
	}
	if dir != p.dataDir() {
		return fmt.Errorf("port %d is served by the cluster in %s", p.port, dir)
	}
	return nil
}

// pidFile reads the server's pid and port from postmaster.pid (its first and fourth lines).
func (p *LocalPostgres) pidFile() (pid, port int, err error) {
	data, err := os.ReadFile(filepath.Join(p.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 4 {
		return 0, 0, errors.New("short postmaster.pid")
	}
	pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err = strconv.Atoi(strings.TrimSpace(lines[3]))
	return pid, port, err
}

// run runs one of the PostgreSQL programs (initdb, pg_ctl) to completion, as the postgres user
// when running as root, in its own process group so that a Ctrl-C in the terminal reaches only
// the dev stack.
func (p *LocalPostgres) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir // a working directory the postgres user can enter
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &commandError{name: name, err: err, out: string(bytes.TrimSpace(out))}
	}
	return nil
}

type commandError struct {
	name string
	err  error
	out  string
}

func (e *commandError) Error() string {
	if e.out == "" {
		return fmt.Sprintf("%s: %v", e.name, e.err)
	}
	return fmt.Sprintf("%s: %v: %s", e.name, e.err, e.out)
}

func (e *commandError) Unwrap() error { return e.err }

// ensureDatabase creates database name on the server of adminURL unless it exists. It polls
// the connection briefly: an adopted server may still be finishing crash recovery.
func ensureDatabase(ctx context.Context, adminURL, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := connectWithRetry(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil || exists {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: created meanwhile
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

func connectWithRetry(ctx context.Context, url string) (*pgx.Conn, error) {
	for {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of the file at path, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// PrepareDatabase lays out the database of adminURL for the services' own roles (pg.Bootstrap):
// a role per service owning its schema, read grants where the code reads across schemas. It
// connects as adminURL's role, which must be a superuser (the stack's own cluster's postgres).
func PrepareDatabase(ctx context.Context, adminURL string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connecting to lay out the database roles: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := pg.Bootstrap(ctx, conn); err != nil {
		return fmt.Errorf("laying out the database roles: %w", err)
	}
	return nil
}
