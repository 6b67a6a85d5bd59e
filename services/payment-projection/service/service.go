// Package service wires the payment-projection service: stream-fed projections of the
// PAYMENTS stream into schema "payments".
package service

import (
	"io/fs"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
)

// Options describes the payment-projection service for the shared runtime.
func Options() svc.Options {
	return svc.Options{
		Name:              "payment-projection",
		Schema:            "payments",
		Migrations:        []fs.FS{projection.Migrations},
		DefaultHealthAddr: "127.0.0.1:8083",
	}
}
