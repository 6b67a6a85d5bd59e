package projection

import (
	"embed"
	"io/fs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the tables of stream-fed projections (versions 100–199 are reserved for
// it; a new one is applied after a service's higher-numbered ones, see pkg/migrate); a service
// adds it to the migration set of its schema.
var Migrations fs.FS

func init() {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	Migrations = sub
}
