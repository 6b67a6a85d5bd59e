package svc

import (
	"context"

	"github.com/payplat/platform/pkg/bus"
)

func (rt *Runtime) provisionOptions() bus.ProvisionOptions {
	return bus.ProvisionOptions{Replicas: rt.Config.StreamReplicas, DuplicateWindow: rt.Config.DuplicateWindow}
}

// provision creates or updates every stream of the bus (idempotent; all services do it at
// start, whichever comes first).
func provision(ctx context.Context, rt *Runtime) error {
	return bus.Provision(ctx, rt.JS, rt.provisionOptions())
}
