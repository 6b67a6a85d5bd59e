// Package service wires the payment-projection service: the payments read table fed from the
// PAYMENTS stream (schema "payments"), and the expiry of PENDING payments past expires_at.
package service

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/app/command"
	"github.com/payplat/platform/services/payment-projection/migrations"
	"github.com/payplat/platform/services/payment-projection/ports"
)

// Durable is the durable pull consumer of the PAYMENTS stream that every replica shares.
const Durable = "payment-projection"

// Stream is the stream the projection consumes.
const Stream = "PAYMENTS"

// Config is the service's own configuration.
type Config struct {
	// ExpiryInterval is how often each replica looks for PENDING payments past expires_at
	// (PAYMENT_EXPIRY_INTERVAL).
	ExpiryInterval time.Duration `env:"PAYMENT_EXPIRY_INTERVAL" envDefault:"5s"`
	// BatchSize is the most messages applied in one transaction (PAYMENT_PROJECTION_BATCH).
	BatchSize int `env:"PAYMENT_PROJECTION_BATCH" envDefault:"500"`
	// Workers is how many batches one replica applies at once (PAYMENT_PROJECTION_WORKERS):
	// while one transaction waits on PostgreSQL, another fetches or commits. Workers of all
	// replicas serialise per payment on its row lock, so a payment's facts are never folded
	// without each other. One by default: at moderate rates every worker commits its own small
	// batch, so more workers cost a transaction each per few payments without keeping up any
	// better (docs/BENCHMARKS.md, "one worker per replica"); a deployment whose PostgreSQL has
	// cores to spare raises it when the projection lags under a backlog.
	Workers int `env:"PAYMENT_PROJECTION_WORKERS" envDefault:"1"`
}

// LoadConfig reads Config from the environment.
func LoadConfig() (Config, error) { return config.Load[Config]() }

// Options describes the payment-projection service for the shared runtime.
func Options(cfg Config) svc.Options {
	return svc.Options{
		Name:              "payment-projection",
		Schema:            migrations.Schema,
		Migrations:        migrations.Sources,
		DefaultHealthAddr: "127.0.0.1:8083",
		Start:             func(ctx context.Context, rt *svc.Runtime) error { return start(ctx, rt, cfg) },
	}
}

// ConsumerSpec is the durable consumer the projection creates up front. MaxAckPending is large
// because the runner fetches whole batches and acknowledges them after one commit.
func ConsumerSpec(batchSize int) bus.ConsumerSpec {
	return bus.ConsumerSpec{Stream: Stream, Durable: Durable, MaxAckPending: 8 * max(batchSize, 1)}
}

// Definition describes the projection for the operator's rebuild and verify.
func Definition(js jetstream.JetStream) projection.Definition {
	return projection.Definition{Projector: ports.NewProjector(), Schema: migrations.Schema,
		Tables: []string{"payments"}, Source: projection.StreamSource{JS: js, Stream: Stream}}
}

func start(ctx context.Context, rt *svc.Runtime, cfg Config) error {
	consumer, err := bus.EnsurePullConsumer(ctx, rt.JS, ConsumerSpec(cfg.BatchSize))
	if err != nil {
		return err
	}
	dl, metrics, err := rt.ConsumerSupport()
	if err != nil {
		return err
	}
	for i := range max(cfg.Workers, 1) {
		proj := ports.NewProjector()
		// After each committed batch, the payments it changed are announced (adapters.Notify),
		// so that the gateway's read-your-writes waits end at once.
		runner, err := projection.NewStreamRunner(rt.DB, consumer, Durable, proj, projection.StreamRunnerOptions{
			BatchSize: cfg.BatchSize, DeadLetter: dl.SendJetStream, Logger: rt.Log, Metrics: metrics,
			AfterApply: func(context.Context) { adapters.Notify(rt.NC, proj.TakeApplied()) }})
		if err != nil {
			return err
		}
		rt.Go(fmt.Sprintf("projection-%d", i), runner.Run)
	}
	rt.WatchConsumer(Durable, metrics.Progress(Durable))
	pruner, err := projection.NewPruner(rt.DB, consumer, ports.ProjectorName, rt.PruneOptions())
	if err != nil {
		return err
	}
	rt.Go("prune-applied", pruner.Run)
	pub, err := bus.NewPublisher(rt.NC, bus.PublisherOptions{Logger: rt.Log})
	if err != nil {
		return err
	}
	expire := command.NewExpirePaymentsHandler(adapters.NewDuePayments(rt.DB), pub, 100)
	// A failed round may have published some of its payment.expired before it rolled back: the
	// next round publishes them again, with the same event ids (de-duplicated).
	failures := prometheus.NewCounter(prometheus.CounterOpts{Name: "payment_expiry_round_failures_total",
		Help: "Expiry rounds that failed and were retried at the next tick."})
	if err := rt.Registry.Register(failures); err != nil {
		return err
	}
	rt.Go("expiry", func(ctx context.Context) error {
		return ports.RunExpiry(ctx, expire, cfg.ExpiryInterval, func(err error) {
			failures.Inc()
			rt.Log.Warn("payment expiry failed; retrying at the next tick", "err", err)
		})
	})
	return nil
}
