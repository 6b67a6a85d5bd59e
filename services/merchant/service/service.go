// Package service wires the merchant service: the merchant aggregate's event store in schema
// "merchant", relayed to the MERCHANTS stream.
package service

import (
	"io/fs"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
)

// Options describes the merchant service for the shared runtime.
func Options() svc.Options {
	return svc.Options{
		Name:              "merchant",
		Schema:            "merchant",
		Migrations:        []fs.FS{eventstore.Migrations, projection.Migrations},
		DefaultHealthAddr: "127.0.0.1:8081",
		RelayStream:       "MERCHANTS",
	}
}
