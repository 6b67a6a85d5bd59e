// Package service wires the webhook-dispatcher service (schema "webhooks"): the durable
// consumers of the catalogue events, the delivery lanes and the "webhooks" request-reply
// service the gateway calls.
package service

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/app/command"
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
	policy := domain.URLPolicy{AllowHTTP: cfg.AllowHTTP, AllowPrivateNetworks: cfg.AllowPrivateNetworks,
		AllowAnyPort: cfg.AllowAnyPort}
	sender := adapters.NewSender(adapters.SenderConfig{Timeout: cfg.Timeout, Policy: policy, RootCAs: cfg.rootCAs})
	repo := adapters.NewRepository(rt.DB)
	d := app.NewDispatcher(repo, sender, box, app.Config{Schedule: cfg.RetrySchedule,
		Timeout: cfg.Timeout, EndpointConcurrency: cfg.EndpointConcurrency,
		Announce:      announcer(rt),
		ManualRetries: app.RetryLimit{Rate: cfg.ManualRetryRate, Burst: cfg.ManualRetryBurst}}, metrics, rt.Log)
	stopLanes := d.Start(ctx)
	if err := startConsumers(ctx, rt, d, cfg.Partitions); err != nil {
		stopLanes()
		return err
	}
	interval := cfg.RecoveryInterval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	rt.Go("webhooks-recovery", func(ctx context.Context) error { return d.Recover(ctx, interval) })
	if cfg.DeliveryRetention > 0 {
		rt.Go("webhooks-prune", func(ctx context.Context) error {
			return d.Prune(ctx, cfg.DeliveryRetention, cfg.PruneInterval)
		})
	}
	srv, err := ports.StartCommandServer(ctx, rt.NC, ports.Application{
		ConfigureEndpoint: command.NewConfigureEndpointHandler(repo, policy, box),
		RetryDelivery:     command.NewRetryDeliveryHandler(repo, d),
		RunDueRetries:     command.NewRunDueRetriesHandler(repo, d, rt.Log),
	}, rt.Log)
	if err != nil {
		stopLanes()
		return fmt.Errorf("serving the webhooks service: %w", err)
	}
	rt.Go("webhooks-service", func(ctx context.Context) error {
		<-ctx.Done()
		err := srv.Stop()
		stopLanes()
		d.Wait()
		if err != nil {
			// Logged rather than returned, which would fail the process's exit status: the
			// requests in flight were waited for all the same.
			rt.Log.Warn("stopping the webhooks service", "err", err)
		}
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

// startConsumers provisions the dispatcher's events stream and its partitions' consumers, and
// runs the Assigner, which consumes the partitions this replica holds.
func startConsumers(ctx context.Context, rt *svc.Runtime, d *app.Dispatcher, partitions int) error {
	if partitions <= 0 {
		return fmt.Errorf("WEBHOOK_PARTITIONS must be positive, got %d", partitions)
	}
	if err := ports.EnsureEventsStream(ctx, rt.JS, partitions, rt.Config.StreamReplicas); err != nil {
		return err
	}
	dl, metrics, err := rt.ConsumerSupport()
	if err != nil {
		return err
	}
	consume := func(ctx context.Context, p int, held func() bool) {
		c, err := rt.JS.Consumer(ctx, ports.EventsStream, ports.PartitionConsumer(p).Durable)
		for err != nil && ctx.Err() == nil {
			rt.Log.Warn("looking up a partition's consumer; retrying", "partition", p, "err", err)
			sleep(ctx, time.Second)
			c, err = rt.JS.Consumer(ctx, ports.EventsStream, ports.PartitionConsumer(p).Durable)
		}
		if err == nil {
			_ = ports.NewConsumer(d, dl, c, p, rt.Log, metrics).Run(ctx, held)
		}
	}
	a := app.NewAssigner(adapters.NewPartitions(rt.DB), memberName(), app.AssignerConfig{Partitions: partitions,
		Consume: consume, Drain: d.DrainPartition}, rt.Log)
	rt.Go("partitions", a.Run)
	return nil
}

// memberName names this replica among the dispatchers: host, process and a random part (a
// restarted process is a new member).
func memberName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8])
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
