package projection

import (
	"embed"
	"io/fs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the tables of stream-fed projections (versions 100–199 are reserved for
// it); a service adds it to the migration set of its schema.
var Migrations fs.FS

func init() {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	Migrations = sub
}
