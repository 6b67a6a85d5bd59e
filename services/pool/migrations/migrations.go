// Package migrations holds the pool service's own numbered SQL migrations (read tables,
// versions 2001 and up), embedded in the binary. The service applies them to schema "pool"
// together with the event store's and the projection runner's.
package migrations

import (
	"embed"
	"io/fs"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
)

// Schema is the PostgreSQL schema the pool service owns: its event store and read tables; the
// gateway reads the read tables as pool.<table>.
const Schema = "pool"

//go:embed *.sql
var files embed.FS

// FS holds the pool's own migration files. Their names are the versions recorded in deployed
// databases' goose tables: never rename or renumber one.
var FS fs.FS = files

// Sources are every migration of the schema: event store, projection bookkeeping, read tables.
var Sources = []fs.FS{eventstore.Migrations, projection.Migrations, FS}

// Set returns the migration set of the pool schema.
func Set() migrate.Set { return migrate.Set{Schema: Schema, Sources: Sources} }
