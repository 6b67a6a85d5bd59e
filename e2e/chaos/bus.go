package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

// Publisher publishes events the way a careful internal team does: protobuf with
// Nats-Msg-Id = event id, each publish retried with the same id until JetStream acknowledges
// it, through NATS restarts.
type Publisher struct {
	nc *nats.Conn
	js jetstream.JetStream
}

// connect opens a NATS connection as client that reconnects forever.
func connect(url string, client natsx.Client) (*nats.Conn, error) {
	return client.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.ReconnectBufSize(32<<20))
}

// NewPublisher connects to url as client.
func NewPublisher(url string, client natsx.Client) (*Publisher, error) {
	nc, err := connect(url, client)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Publisher{nc: nc, js: js}, nil
}

// Close closes the connection.
func (p *Publisher) Close() { p.nc.Close() }

// Publish publishes ev and returns once JetStream has acknowledged it, retrying until ctx ends.
func (p *Publisher) Publish(ctx context.Context, ev proto.Message) error {
	m, err := loadgen.NATSMessage(ev, "")
	if err != nil {
		return err
	}
	return p.publishMsg(ctx, m)
}

func (p *Publisher) publishMsg(ctx context.Context, m *nats.Msg) error {
	backoff := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := p.js.PublishMsg(actx, m)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("publishing %s: %w (last error: %v)", m.Subject, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}
