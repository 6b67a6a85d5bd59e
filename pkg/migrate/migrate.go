// Package migrate applies a service's embedded, numbered SQL migrations to its own schema with
// goose. Shared libraries (the event store, the projection runner) ship their own migration
// files; a service combines them with its own into one Set.
package migrate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/payplat/platform/pkg/pg"
)

// Set is the migrations of one schema: the files *.sql at the root of each source and the Go
// migrations of the sources that are GoSources, applied in the order of their version numbers,
// which must not repeat across sources.
type Set struct {
	Schema  string
	Sources []fs.FS
}

// GoSource is a source of SQL files that also holds migrations written in Go, for the data
// changes SQL cannot express (re-encoding stored values, for example). A Go migration's
// function runs in the migration's transaction like a SQL file; its version must not repeat
// any file's.
type GoSource struct {
	fs.FS
	Go []*goose.Migration
}

func (s Set) goMigrations() []*goose.Migration {
	var out []*goose.Migration
	for _, src := range s.Sources {
		if g, ok := src.(GoSource); ok {
			out = append(out, g.Go...)
		}
	}
	return out
}

// Merge returns one file system holding the .sql files of every source.
func (s Set) Merge() (fs.FS, error) {
	merged := fstest.MapFS{}
	for _, src := range s.Sources {
		names, err := fs.Glob(src, "*.sql")
		if err != nil {
			return nil, fmt.Errorf("listing migrations: %w", err)
		}
		for _, name := range names {
			if _, dup := merged[name]; dup {
				return nil, fmt.Errorf("migration %s appears in two sources", name)
			}
			data, err := fs.ReadFile(src, name)
			if err != nil {
				return nil, fmt.Errorf("reading migration %s: %w", name, err)
			}
			merged[path.Base(name)] = &fstest.MapFile{Data: data}
		}
	}
	return merged, nil
}

// Fingerprint identifies the content of the set (schema, file names and bytes), so a test
// harness can reuse a database migrated with the same set.
func (s Set) Fingerprint() (string, error) {
	merged, err := s.Merge()
	if err != nil {
		return "", err
	}
	m := merged.(fstest.MapFS)
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	h.Write([]byte(s.Schema))
	for _, n := range names {
		h.Write([]byte{0})
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(m[n].Data)
	}
	// A Go migration's code cannot be hashed: its version stands for it.
	for _, g := range s.goMigrations() {
		fmt.Fprintf(h, "\x00go:%d", g.Version)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Up creates the set's schema if needed and applies every pending migration, holding a
// PostgreSQL advisory lock so that several replicas starting at once migrate one at a time.
func Up(ctx context.Context, dsn string, sets ...Set) error {
	for _, set := range sets {
		if err := up(ctx, dsn, set); err != nil {
			return fmt.Errorf("migrating schema %s: %w", set.Schema, err)
		}
	}
	return nil
}

func up(ctx context.Context, dsn string, set Set) error {
	cfg, err := pg.ParsePoolConfig(dsn, set.Schema)
	if err != nil {
		return err
	}
	db := stdlib.OpenDB(*cfg.ConnConfig)
	defer db.Close()
	if err := createSchema(ctx, db, set.Schema); err != nil {
		return err
	}
	fsys, err := set.Merge()
	if err != nil {
		return err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID(set.Schema)))
	if err != nil {
		return fmt.Errorf("creating migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(set.Schema+".goose_db_version"),
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
		// A shared library's new migration (numbered in the library's low range) comes after
		// a service's own higher-numbered ones already applied in existing schemas: apply it
		// rather than refuse to start. Sources never depend on each other's later files.
		goose.WithAllowOutofOrder(true),
		goose.WithGoMigrations(set.goMigrations()...),
	)
	if err != nil {
		return fmt.Errorf("loading migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return err
	}
	return nil
}

func createSchema(ctx context.Context, db *sql.DB, schema string) error {
	if !pg.ValidSchema(schema) {
		return fmt.Errorf("invalid schema name %q", schema)
	}
	_, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema)
	// Two replicas creating the schema at the same instant: one gets a unique violation on
	// pg_namespace, and the schema exists, which is all we wanted.
	if err != nil && !pg.IsUniqueViolation(err, "") {
		return fmt.Errorf("creating schema: %w", err)
	}
	return nil
}

// lockID derives a stable advisory lock id per schema, so that different schemas migrate in
// parallel while replicas of one service take turns.
func lockID(schema string) int64 {
	sum := sha256.Sum256([]byte("payplat-migrate:" + strings.ToLower(schema)))
	var id int64
	for _, b := range sum[:8] {
		id = id<<8 | int64(b)
	}
	if id < 0 {
		id = -id
	}
	return id
}
