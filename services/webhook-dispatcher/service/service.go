// Package service wires the webhook-dispatcher service (schema "webhooks"): the durable
// consumers of the catalogue events, the delivery lanes and the "webhooks" request-reply
// service the gateway calls.
package service

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/outcomes"
	"github.com/payplat/platform/services/webhook-dispatcher/ports"
)

// Options describes the webhook-dispatcher service for the shared runtime.
func Options(cfg Config) svc.Options {
	return svc.Options{
		Name:              "webhook-dispatcher",
		Schema:            migrations.Schema,
		Migrations:        []fs.FS{projection.Migrations, migrations.FS},
		DefaultHealthAddr: "127.0.0.1:8084",
		Start:             func(ctx context.Context, rt *svc.Runtime) error { return start(ctx, rt, cfg) },
	}
}

func start(ctx context.Context, rt *svc.Runtime, cfg Config) error {
	key, err := domain.ParseSecretKey(cfg.SecretKey)
	if err != nil {
		return err
	}
	box, err := domain.NewSecretBox(key)
	if err != nil {
		return err
	}
	metrics, err := app.NewMetrics(rt.Registry)
	if err != nil {
		return err
	}
	policy := domain.URLPolicy{AllowHTTP: cfg.AllowHTTP, AllowPrivateNetworks: cfg.AllowPrivateNetworks}
	sender := adapters.NewSender(adapters.SenderConfig{Timeout: cfg.Timeout, Policy: policy, RootCAs: cfg.rootCAs})
	d := app.NewDispatcher(adapters.NewStore(rt.DB), sender, box, app.Config{Schedule: cfg.RetrySchedule,
		Timeout: cfg.Timeout, Policy: policy, EndpointConcurrency: cfg.EndpointConcurrency,
		Announce: announcer(rt)}, metrics, rt.Log)
	stopLanes := d.Start(ctx)
	if err := startConsumers(ctx, rt, d); err != nil {
		stopLanes()
		return err
	}
	interval := cfg.RecoveryInterval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	rt.Go("webhooks-recovery", func(ctx context.Context) error { return d.Recover(ctx, interval) })
	stop, err := ports.NewRPC(d, rt.Log).Serve(ctx, rt.NC)
	if err != nil {
		stopLanes()
		return fmt.Errorf("serving the webhooks service: %w", err)
	}
	rt.Go("webhooks-service", func(ctx context.Context) error {
		<-ctx.Done()
		stop()
		stopLanes()
		d.Wait()
		return nil
	})
	return nil
}

// announcer publishes each recorded attempt on its company's outcome subject (core NATS,
// fire-and-forget: the delivery log is the truth, the announcement only wakes the dashboard).
func announcer(rt *svc.Runtime) func(c domain.Claim, status string, attempts int) {
	return func(c domain.Claim, status string, attempts int) {
		subject, ok := outcomes.Subject(c.Environment, c.CompanyID)
		if !ok {
			return
		}
		o := outcomes.Outcome{DeliveryID: c.ID.String(), EventType: c.EventType, Status: status, Attempts: attempts}
		if err := rt.NC.Publish(subject, o.Marshal()); err != nil {
			rt.Log.Debug("announcing webhook outcome", "delivery_id", c.ID, "err", err)
		}
	}
}

// startConsumers creates the durable consumers up front and runs one fetch loop per stream.
func startConsumers(ctx context.Context, rt *svc.Runtime, d *app.Dispatcher) error {
	dl, err := bus.NewDeadLetterer(rt.JS, rt.Registry)
	if err != nil {
		return err
	}
	for _, spec := range ports.ConsumerSpecs() {
		c, err := bus.EnsurePullConsumer(ctx, rt.JS, spec)
		if err != nil {
			return err
		}
		consumer := ports.NewConsumer(d, dl, c, spec.Durable, rt.Log)
		rt.Go("consume "+spec.Durable, consumer.Run)
	}
	return nil
}
