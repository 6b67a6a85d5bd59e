// Package adapters holds the pool service's PostgreSQL side: the read tables' migrations, the
// repository that loads a pool and saves its changes (events and read tables in one
// transaction), and the look-ups of merchant names and known companies.
package adapters

import (
	"embed"
	"io/fs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the read tables of the pool schema (versions 2001 and up).
var Migrations = mustSub(migrationFiles, "migrations")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
