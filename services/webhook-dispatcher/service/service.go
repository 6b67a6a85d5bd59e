// Package service wires the webhook-dispatcher service (schema "webhooks").
package service

import (
	"io/fs"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
)

// Options describes the webhook-dispatcher service for the shared runtime.
func Options() svc.Options {
	return svc.Options{
		Name:              "webhook-dispatcher",
		Schema:            "webhooks",
		Migrations:        []fs.FS{projection.Migrations},
		DefaultHealthAddr: "127.0.0.1:8084",
	}
}
