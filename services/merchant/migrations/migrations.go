// Package migrations holds the merchant service's own numbered SQL migrations (read tables and
// wallet records, versions 1001+), embedded in the binary. The service applies them to schema
// "merchant" together with the event store's and the projection runner's.
package migrations

import (
	"embed"
	"io/fs"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
)

// Schema is the PostgreSQL schema the merchant service owns; the gateway reads its read
// tables as merchant.<table>.
const Schema = "merchant"

//go:embed *.sql
var files embed.FS

// Sources are every migration of the schema: event store, projection bookkeeping, read tables.
var Sources = []fs.FS{eventstore.Migrations, projection.Migrations, files}

// Set returns the migration set of the merchant schema.
func Set() migrate.Set { return migrate.Set{Schema: Schema, Sources: Sources} }
