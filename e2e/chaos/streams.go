package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
)

// streamMsg is a stored message as the checks need it.
type streamMsg struct {
	Seq     uint64
	Subject string
	MsgID   string
	Header  nats.Header
	Size    int
}

// readStream returns every message of stream (matching filter, when set), in stream order,
// through an ordered consumer. A read the JetStream API could not serve (a cluster electing a
// leader after a node restarted) is tried again, for up to a minute.
func readStream(ctx context.Context, js jetstream.JetStream, stream, filter string) ([]streamMsg, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		msgs, err := readStreamOnce(ctx, js, stream, filter)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return msgs, err
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func readStreamOnce(ctx context.Context, js jetstream.JetStream, stream, filter string) ([]streamMsg, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	c, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, err
	}
	var out []streamMsg
	for {
		batch, err := c.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, err
		}
		n := 0
		var pending uint64 = 1
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			out = append(out, streamMsg{Seq: md.Sequence.Stream, Subject: m.Subject(), MsgID: m.Headers().Get(nats.MsgIdHdr),
				Header: m.Headers(), Size: len(m.Data())})
			pending = md.NumPending
		}
		if n == 0 {
			if err := batch.Error(); err != nil && !bus.IsFetchTimeout(err) {
				return nil, err
			}
			return out, nil
		}
		if pending == 0 {
			return out, nil
		}
	}
}
