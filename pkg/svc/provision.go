package svc

import (
	"context"

	"github.com/payplat/platform/pkg/bus"
)

func (rt *Runtime) provisionOptions() bus.ProvisionOptions {
	return bus.ProvisionOptions{Replicas: rt.Config.StreamReplicas, DuplicateWindow: rt.Config.DuplicateWindow}
}

// streamNames lists every stream of the bus, dead-letter stream included.
func streamNames() []string {
	var names []string
	for _, s := range bus.Streams(bus.ProvisionOptions{}) {
		names = append(names, s.Name)
	}
	return names
}

// provision creates or updates every stream of the bus (idempotent; all services do it at
// start, whichever comes first).
func provision(ctx context.Context, rt *Runtime) error {
	return bus.Provision(ctx, rt.JS, rt.provisionOptions())
}
