// Package service wires the webhook-dispatcher service (schema "webhooks"): the intakes of the
// catalogue events, the delivery lanes and the "webhooks" request-reply service the gateway
// calls.
package service

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/api"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/app/command"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
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
		subject, ok := api.OutcomeSubject(c.Environment, c.CompanyID)
		if !ok {
			return
		}
		o := api.Outcome{DeliveryID: c.ID.String(), EventType: c.EventType, Status: status, Attempts: attempts}
		if err := rt.NC.Publish(subject, o.Marshal()); err != nil {
			rt.Log.Debug("announcing webhook outcome", "delivery_id", c.ID, "err", err)
		}
	}
}

// startConsumers creates the partitions (their positions in the event streams at the first
// start, retiring what an earlier version read) and runs the Assigner, which takes this
// replica's share of them, and an intake per event stream, which reads for them.
func startConsumers(ctx context.Context, rt *svc.Runtime, d *app.Dispatcher, partitions int) error {
	if partitions <= 0 {
		return fmt.Errorf("WEBHOOK_PARTITIONS must be positive, got %d", partitions)
	}
	store := adapters.NewPartitions(rt.DB)
	started, err := store.Started(ctx)
	if err != nil {
		return err
	}
	var start ports.Start
	if !started {
		if start, err = ports.StartPositions(ctx, rt.JS, partitions, rt.Log); err != nil {
			return err
		}
	}
	if err := store.Ensure(ctx, partitions, ports.SourceNames(), start); err != nil {
		return err
	}
	dl, metrics, err := rt.ConsumerSupport()
	if err != nil {
		return err
	}
	member := memberName()
	held := ports.NewHeld(partitions)
	for _, in := range ports.IntakesFor(ports.IntakeConfig{JS: rt.JS, Held: held, Positions: store, Dispatcher: d,
		DeadLetter: dl, Member: member, Log: rt.Log, Metrics: metrics, Probe: rt.DB.Ping}) {
		rt.Go("intake", in.Run)
	}
	a := app.NewAssigner(store, member, app.AssignerConfig{Partitions: partitions, Consume: held.Consume,
		Drain: d.DrainPartition}, rt.Log)
	rt.Go("partitions", a.Run)
	rt.Go("retire-copy", func(ctx context.Context) error { return retireCopy(ctx, rt, store) })
	return nil
}

// memberSuffix ends the member names of the dispatchers that read the event streams
// themselves, which tells them from those of earlier versions, which read the copy stream.
const memberSuffix = "/intake"

// retireCopyEvery is how often retireCopy looks whether dispatchers of an earlier version are
// still alive.
const retireCopyEvery = 5 * time.Second

// retireCopy deletes what earlier versions of the dispatcher read (ports.RetireCopy) once every
// dispatcher alive is of this version: during a rolling upgrade the earlier version's replicas
// go on reading the copy stream for the partitions they hold until they stop. (Their work is
// read again from the positions taken at the upgrade, and creates nothing twice.)
func retireCopy(ctx context.Context, rt *svc.Runtime, store *adapters.Partitions) error {
	for {
		members, err := store.LiveMembers(ctx)
		if err == nil && len(members) > 0 && !slices.ContainsFunc(members, func(m string) bool {
			return !strings.HasSuffix(m, memberSuffix)
		}) {
			if err = ports.RetireCopy(ctx, rt.JS); err == nil {
				return nil
			}
		}
		if err != nil && ctx.Err() == nil {
			rt.Log.Warn("retiring the copy stream of earlier versions; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retireCopyEvery):
		}
	}
}

// memberName names this replica among the dispatchers: host, process and a random part (a
// restarted process is a new member).
func memberName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s%s", host, os.Getpid(), uuid.NewString()[:8], memberSuffix)
}
