// Package migrations holds the payment-projection service's own numbered SQL migrations
// (versions 3001+), embedded in the binary. The service applies them to schema "payments"
// together with the projection runner's; the gateway reads the tables as payments.<table>.
package migrations

import (
	"embed"
	"io/fs"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
)

// Schema is the PostgreSQL schema the payment-projection service owns.
const Schema = "payments"

//go:embed *.sql
var files embed.FS

// Sources are every migration of the schema: projection bookkeeping, then the read tables.
var Sources = []fs.FS{projection.Migrations, files}

// Set returns the migration set of the payments schema.
func Set() migrate.Set { return migrate.Set{Schema: Schema, Sources: Sources} }
