package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/pg"
)

// The admin connection string of the PostgreSQL server the tests of this process use, resolved
// once: DATABASE_URL; else the server on 127.0.0.1:5432 when it answers; else a throw-away
// cluster started with the machine's initdb and pg_ctl (stopped by Main).
var (
	serverOnce sync.Once
	serverDSN  string
	serverErr  error

	templatesMu sync.Mutex
	templates   = map[string]string{} // fingerprint -> template database name
)

// PostgresServer returns the admin connection string of the test PostgreSQL server.
func PostgresServer(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() { serverDSN, serverErr = resolveServer() })
	if serverErr != nil {
		t.Fatalf("no PostgreSQL for tests: %v", serverErr)
	}
	return serverDSN
}

func resolveServer() (string, error) {
	if dsn := os.Getenv("DATABASE_URL"); dsn != "" {
		return dsn, nil
	}
	const local = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	if reachable("127.0.0.1:5432") {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, local); err == nil {
			conn.Close(ctx)
			return local, nil
		}
	}
	return startTempCluster()
}

func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// NewDatabase creates a fresh database for this test, cloned from a template database that has
// the given migration sets applied (built once per process and set of migrations), and returns
// its connection string. The database is dropped when the test ends.
func NewDatabase(t testing.TB, sets ...migrate.Set) string {
	t.Helper()
	admin := PostgresServer(t)
	tpl, err := template(admin, sets)
	if err != nil {
		t.Fatalf("preparing template database: %v", err)
	}
	name := fmt.Sprintf("pptest_%d_%s", os.Getpid(), randomHex(8))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := createFromTemplate(ctx, admin, name, tpl); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := dropDatabase(ctx, admin, name); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	return WithDatabase(admin, name)
}

// NewPool opens a pgx pool on dsn with the search_path set to schema, closed when the test ends.
func NewPool(t testing.TB, dsn, schema string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pg.Connect(ctx, dsn, schema)
	if err != nil {
		t.Fatalf("connecting to test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// WithDatabase returns dsn with its database name replaced.
func WithDatabase(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	// key=value form: a later dbname overrides an earlier one.
	return strings.TrimSpace(dsn) + " dbname=" + name
}

func template(admin string, sets []migrate.Set) (string, error) {
	h := make([]string, 0, len(sets))
	for _, s := range sets {
		fp, err := s.Fingerprint()
		if err != nil {
			return "", err
		}
		h = append(h, fp)
	}
	key := strings.Join(h, ",")
	dropOrphans(admin)
	templatesMu.Lock()
	defer templatesMu.Unlock()
	if name, ok := templates[key]; ok {
		return name, nil
	}
	// One template per process: parallel test binaries never wait on each other's templates,
	// and Main drops this process's templates at exit.
	name := fmt.Sprintf("pptpl_%d_%s", os.Getpid(), randomHex(4))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := createDatabase(ctx, admin, name); err != nil {
		return "", err
	}
	if err := migrate.Up(ctx, WithDatabase(admin, name), sets...); err != nil {
		_ = dropDatabase(ctx, admin, name)
		return "", err
	}
	templates[key] = name
	return name, nil
}

func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func createDatabase(ctx context.Context, admin, name string) error {
	return adminExec(ctx, admin, "CREATE DATABASE "+name)
}

func createFromTemplate(ctx context.Context, admin, name, tpl string) error {
	var err error
	// CREATE DATABASE copies refuse while another session is connected to the template; the
	// harness never keeps one open, but retry briefly in case a clone is just finishing.
	for attempt := 0; attempt < 20; attempt++ {
		err = adminExec(ctx, admin, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tpl))
		if err == nil || !strings.Contains(err.Error(), "being accessed by other users") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func dropDatabase(ctx context.Context, admin, name string) error {
	return adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// Main runs the tests of a package and then drops this process's template databases and stops
// a temporary cluster if one was started; in a process StartHelper started, it runs that helper
// instead. Use it from TestMain: os.Exit(testkit.Main(m)).
func Main(m interface{ Run() int }) int {
	if code, ok := runHelper(); ok {
		return code
	}
	code := m.Run()
	cleanupProcess()
	return code
}

func cleanupProcess() {
	templatesMu.Lock()
	names := make([]string, 0, len(templates))
	for _, n := range templates {
		names = append(names, n)
	}
	templates = map[string]string{}
	templatesMu.Unlock()
	if serverDSN != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, n := range names {
			_ = dropDatabase(ctx, serverDSN, n)
		}
		cancel()
	}
	stopTempCluster()
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
