// Package migrations holds the gateway's numbered SQL migrations for its schema, embedded in the
// binary.
package migrations

import (
	"embed"
	"io/fs"

	"github.com/payplat/platform/pkg/migrate"
)

// Schema is the PostgreSQL schema the gateway owns.
const Schema = "gateway"

//go:embed *.sql
var files embed.FS

// Set returns the gateway's migrations.
func Set() migrate.Set {
	return migrate.Set{Schema: Schema, Sources: []fs.FS{files}}
}
