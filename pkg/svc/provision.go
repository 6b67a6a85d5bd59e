package svc

import (
	"context"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/projection"
)

func (rt *Runtime) provisionOptions() bus.ProvisionOptions {
	return bus.ProvisionOptions{Replicas: rt.Config.StreamReplicas, DuplicateWindow: rt.Config.DuplicateWindow,
		DeadLetterMaxAge: rt.Config.DeadLetterMaxAge}
}

// PruneOptions are the options of the projection.Pruner of each stream-fed projection the
// service runs (PROJECTION_PRUNE_INTERVAL, PROJECTION_APPLIED_RETENTION).
func (rt *Runtime) PruneOptions() projection.PruneOptions {
	return projection.PruneOptions{Interval: rt.Config.ProjectionPruneInterval,
		Retention: rt.Config.ProjectionAppliedRetention, Logger: rt.Log}
}

// provision creates or updates every stream of the bus (idempotent; all services do it at
// start, whichever comes first).
func provision(ctx context.Context, rt *Runtime) error {
	return bus.Provision(ctx, rt.JS, rt.provisionOptions())
}
