// Package migrations holds the payment-projection service's own numbered migrations (versions
// 3001+: SQL files embedded in the binary, and Go ones for data SQL cannot convert). The service applies them to schema "payments"
// together with the projection runner's; the gateway reads the tables as payments.<table>.
package migrations

import (
	"embed"
	"io/fs"

	"github.com/pressly/goose/v3"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
)

// Schema is the PostgreSQL schema the payment-projection service owns.
const Schema = "payments"

//go:embed *.sql
var files embed.FS

// Sources are every migration of the schema: projection bookkeeping, then the read tables (SQL
// files, and the Go migration that moves the facts into the payments rows).
var Sources = []fs.FS{projection.Migrations, migrate.GoSource{FS: files, Go: []*goose.Migration{factsIntoPayments()}}}

// Set returns the migration set of the payments schema.
func Set() migrate.Set { return migrate.Set{Schema: Schema, Sources: Sources} }
