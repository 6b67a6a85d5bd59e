package svctest

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/projection"
)

// ConsumerProcess is a projection's stream runner as its service runs it, for a helper process
// (testkit.RegisterHelper) that a test kills with SIGKILL mid-way: the database and NATS server
// come from the environment the test started the helper with.
type ConsumerProcess struct {
	DSN, Schema, NATSURL string
	// Consumer is the durable pull consumer the runner takes its batches from (created if
	// missing); its name is the runner's and the dead-letter subject's.
	Consumer  bus.ConsumerSpec
	BatchSize int
	// Wrap, when set, wraps the consumer, as testkit.KillOnFirstAck does.
	Wrap func(jetstream.Consumer) jetstream.Consumer
	// Projector builds the projector on the process's database.
	Projector func(db *pgxpool.Pool) projection.Projector
}

// Run runs the stream runner until the process is killed and returns the helper's exit code:
// 2 when it cannot start (the cause on standard error), 3 should the runner ever return.
func (p ConsumerProcess) Run() int {
	ctx := context.Background()
	runner, err := p.runner(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = runner.Run(ctx)
	return 3 // never reached
}

func (p ConsumerProcess) runner(ctx context.Context) (*projection.StreamRunner, error) {
	db, err := pg.Connect(ctx, p.DSN, p.Schema)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(p.NATSURL)
	if err != nil {
		return nil, err
	}
	js, _ := jetstream.New(nc)
	c, err := bus.EnsurePullConsumer(ctx, js, p.Consumer)
	if err != nil {
		return nil, err
	}
	if p.Wrap != nil {
		c = p.Wrap(c)
	}
	dl, _ := bus.NewDeadLetterer(js, nil)
	return projection.NewStreamRunner(db, c, p.Consumer.Durable, p.Projector(db),
		projection.StreamRunnerOptions{BatchSize: p.BatchSize, DeadLetter: dl.SendJetStream})
}
