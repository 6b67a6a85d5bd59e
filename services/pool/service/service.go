// Package service wires the pool service: the treasury pool aggregates' event store and read
// tables in schema "pool", relayed to the POOL stream; the consumers of treasury and payment
// facts; the NATS commands.
package service

import (
	"context"
	"time"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/svc"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/app/command"
	"github.com/payplat/platform/services/pool/migrations"
	"github.com/payplat/platform/services/pool/ports"
)

// Durable consumers of the pool service, created up front.
const (
	DurableTreasury = "pool-treasury"
	DurablePayments = "pool-payments"
)

// Config is the pool service's own configuration (the shared one is svc.Config); zero fields
// take their defaults.
type Config struct {
	// BatchSize is the most messages recorded in one transaction (POOL_BATCH_SIZE, default 1000).
	BatchSize int `env:"POOL_BATCH_SIZE" envDefault:"1000"`
	// AckWait is how long JetStream waits for an acknowledgement before redelivering
	// (POOL_ACK_WAIT, default bus.DefaultPullAckWait).
	AckWait time.Duration `env:"POOL_ACK_WAIT"`
	// MaxAckPending bounds the unacknowledged messages per consumer (POOL_MAX_ACK_PENDING,
	// default 4096, so that a hot pool is fed full batches).
	MaxAckPending int `env:"POOL_MAX_ACK_PENDING" envDefault:"4096"`
}

// LoadConfig reads Config from the environment.
func LoadConfig() (Config, error) { return config.Load[Config]() }

// Options describes the pool service for the shared runtime.
func Options(cfg Config) svc.Options {
	if cfg.MaxAckPending <= 0 {
		cfg.MaxAckPending = 4096
	}
	return svc.Options{
		Name:              "pool",
		Schema:            migrations.Schema,
		Migrations:        migrations.Sources,
		DefaultHealthAddr: "127.0.0.1:8082",
		RelayStream:       "POOL",
		Start:             func(ctx context.Context, rt *svc.Runtime) error { return start(ctx, rt, cfg) },
	}
}

// Consumers returns the specs of the pool's durable consumers.
func Consumers(t Config) []bus.ConsumerSpec {
	return []bus.ConsumerSpec{
		{Stream: "TREASURY", Durable: DurableTreasury, AckWait: t.AckWait, MaxAckPending: t.MaxAckPending,
			FilterSubjects: []string{"treasury.*.*.deposit_detected", "treasury.*.*.withdrawal_completed",
				"treasury.*.*.refund_completed"}},
		{Stream: "PAYMENTS", Durable: DurablePayments, AckWait: t.AckWait, MaxAckPending: t.MaxAckPending,
			FilterSubjects: []string{"payment.*.*.confirmed"}},
	}
}

func start(ctx context.Context, rt *svc.Runtime, t Config) error {
	repo := adapters.NewRepository(rt.DB)
	dl, metrics, err := rt.ConsumerSupport()
	if err != nil {
		return err
	}
	for _, spec := range Consumers(t) {
		c, err := bus.EnsurePullConsumer(ctx, rt.JS, spec)
		if err != nil {
			return err
		}
		consumer, err := ports.NewConsumer(repo, c, spec.Durable, ports.ConsumerOptions{
			BatchSize: t.BatchSize, DeadLetter: dl.SendJetStream, Logger: rt.Log, Metrics: metrics})
		if err != nil {
			return err
		}
		rt.Go(spec.Durable, consumer.Run)
		rt.WatchConsumer(spec.Durable, consumer.Progress())
	}
	srv, err := ports.StartCommandServer(ctx, rt.NC, ports.Application{
		UpdateSettings:  command.NewUpdateSettingsHandler(repo),
		SimulateDeposit: command.NewSimulateDepositHandler(repo),
	}, rt.Log)
	if err != nil {
		return err
	}
	rt.Go("commands", func(ctx context.Context) error {
		<-ctx.Done()
		return srv.Stop()
	})
	return nil
}
