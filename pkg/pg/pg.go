// Package pg connects services to PostgreSQL with pgx/v5. Each service owns one schema and
// connects with its search_path set to it, so its SQL names its own tables unqualified.
package pg

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var schemaName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// ValidSchema reports whether name is usable as a schema name without quoting.
func ValidSchema(name string) bool { return schemaName.MatchString(name) }

// DefaultMaxConns is the pool size unless the URL sets pool_max_conns. pgx's own default
// (the number of CPUs, at least 4) starves a service whose requests each commit a transaction:
// concurrent commits are what lets PostgreSQL flush many of them with one disk write.
const DefaultMaxConns = 8

// ParsePoolConfig parses dsn and sets the search_path of every connection to schema (then
// public). An empty schema leaves the search_path alone.
func ParsePoolConfig(dsn, schema string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parsing database url: %w", redact(err))
	}
	if !strings.Contains(dsn, "pool_max_conns") && cfg.MaxConns < DefaultMaxConns {
		cfg.MaxConns = DefaultMaxConns
	}
	if schema != "" {
		if !ValidSchema(schema) {
			return nil, fmt.Errorf("invalid schema name %q", schema)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	}
	return cfg, nil
}

// Connect opens a pool on dsn with the search_path set to schema and checks that the server
// answers. tune adjusts the pool's configuration first (WithStatementTimeout).
func Connect(ctx context.Context, dsn, schema string, tune ...func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	cfg, err := ParsePoolConfig(dsn, schema)
	if err != nil {
		return nil, err
	}
	for _, f := range tune {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to postgres: %w", redact(err))
	}
	return pool, nil
}

// WithStatementTimeout makes the server end any statement of the pool's connections that runs
// longer than d (statement_timeout; a wait for a lock included) and any session left idle in a
// transaction longer than d (idle_in_transaction_session_timeout, which also releases its
// locks): a stuck or frozen client holds nothing for longer. Zero leaves both to the server.
func WithStatementTimeout(d time.Duration) func(*pgxpool.Config) {
	return func(c *pgxpool.Config) {
		if d <= 0 {
			return
		}
		ms := strconv.FormatInt(max(d.Milliseconds(), 1), 10)
		c.ConnConfig.RuntimeParams["statement_timeout"] = ms
		c.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = ms
	}
}

// redact drops the connection string from pgx parse errors, which may contain a password.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("invalid connection string")
	}
	return err
}

// IsUniqueViolation reports whether err is a unique_violation (23505), optionally on the named
// constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return constraint == "" || pe.ConstraintName == constraint
}

// InTx runs fn in a transaction that commits when fn returns nil and rolls back otherwise.
func InTx(ctx context.Context, db interface {
	BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
}, fn func(pgx.Tx) error) error {
	tx, err := db.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("beginning transaction: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}
