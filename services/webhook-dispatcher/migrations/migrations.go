// Package migrations holds the SQL migrations of schema "webhooks".
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the webhook-dispatcher owns.
const Schema = "webhooks"

// FS holds the migration files (versions 1–99; the projection library uses 100–199).
var FS fs.FS = files
