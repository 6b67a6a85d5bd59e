// Package service wires the pool service: the treasury pool aggregates' event store and read
// tables in schema "pool", relayed to the POOL stream; the consumers of treasury and payment
// facts; the NATS commands.
package service

import (
	"context"
	"time"

	"github.com/payplat/platform/pkg/bus"
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

// Tuning adjusts the consumers; the zero value means the defaults.
type Tuning struct {
	// BatchSize is the most messages recorded in one transaction (default 1000).
	BatchSize int
	// AckWait is how long JetStream waits for an acknowledgement before redelivering (default
	// bus.DefaultPullAckWait).
	AckWait time.Duration
	// MaxAckPending bounds the unacknowledged messages per consumer (default 4096, so that a
	// hot pool is fed full batches).
	MaxAckPending int
}

// Options describes the pool service for the shared runtime.
func Options() svc.Options { return OptionsWith(Tuning{}) }

// OptionsWith is Options with tuned consumers (tests).
func OptionsWith(t Tuning) svc.Options {
	if t.MaxAckPending <= 0 {
		t.MaxAckPending = 4096
	}
	return svc.Options{
		Name:              "pool",
		Schema:            migrations.Schema,
		Migrations:        migrations.Sources,
		DefaultHealthAddr: "127.0.0.1:8082",
		RelayStream:       "POOL",
		Start:             func(ctx context.Context, rt *svc.Runtime) error { return start(ctx, rt, t) },
	}
}

// Consumers returns the specs of the pool's durable consumers.
func Consumers(t Tuning) []bus.ConsumerSpec {
	return []bus.ConsumerSpec{
		{Stream: "TREASURY", Durable: DurableTreasury, AckWait: t.AckWait, MaxAckPending: t.MaxAckPending,
			FilterSubjects: []string{"treasury.*.*.deposit_detected", "treasury.*.*.withdrawal_completed",
				"treasury.*.*.refund_completed"}},
		{Stream: "PAYMENTS", Durable: DurablePayments, AckWait: t.AckWait, MaxAckPending: t.MaxAckPending,
			FilterSubjects: []string{"payment.*.*.confirmed"}},
	}
}

func start(ctx context.Context, rt *svc.Runtime, t Tuning) error {
	repo := adapters.NewRepository(rt.DB)
	dl, err := bus.NewDeadLetterer(rt.JS, rt.Registry)
	if err != nil {
		return err
	}
	metrics, err := bus.NewConsumerMetrics(rt.Registry)
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
