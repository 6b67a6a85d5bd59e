package svc

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/events"
)

func streamNames() []string {
	var names []string
	for _, s := range events.Streams() {
		names = append(names, s.Name)
	}
	return append(names, events.DeadLetterStream)
}

// provision creates or updates every stream of the bus (idempotent; all services do it at
// start, whichever comes first).
func provision(ctx context.Context, rt *Runtime) error {
	for _, s := range append(events.Streams(), events.Stream{Name: events.DeadLetterStream, Subjects: events.DeadLetterSubjects}) {
		_, err := rt.JS.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: s.Name, Subjects: []string{s.Subjects}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, Replicas: rt.Config.StreamReplicas, Duplicates: rt.Config.DuplicateWindow,
		})
		if err != nil {
			return fmt.Errorf("provisioning stream %s: %w", s.Name, err)
		}
	}
	return nil
}
