// Package service wires the pool service: the treasury pool aggregates' event store in schema
// "pool", relayed to the POOL stream.
package service

import (
	"io/fs"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
)

// Options describes the pool service for the shared runtime.
func Options() svc.Options {
	return svc.Options{
		Name:              "pool",
		Schema:            "pool",
		Migrations:        []fs.FS{eventstore.Migrations, projection.Migrations},
		DefaultHealthAddr: "127.0.0.1:8082",
		RelayStream:       "POOL",
	}
}
