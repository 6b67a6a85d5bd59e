package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// FetchAvailable takes up to max messages from a pull consumer: what is available now, else
// it waits up to maxWait for one message and takes what arrived with it. A quiet consumer is
// served as soon as a message arrives, a busy one in full batches. (A plain Fetch of max
// messages waits for the whole batch or the timeout, which adds up to maxWait of latency to
// every message of a quiet stream.) No message and no error means none arrived in time.
//
// A batch found short is completed by what arrives within Linger: at moderate rates a consumer
// would otherwise fetch, apply and commit one or two messages at a time, spending on pull
// requests and transactions several times the CPU per message of a full batch, so that a
// moderately loaded stack could fall behind.
func FetchAvailable(ctx context.Context, c jetstream.Consumer, max int, maxWait time.Duration) ([]jetstream.Msg, error) {
	return fetchAvailable(ctx, c, max, maxWait, Linger, false)
}

// Fetcher takes batches from a pull consumer as FetchAvailable does, one caller at a time, and
// saves a pull request per batch at moderate rates: after a batch short of Max (the consumer
// had no more), it waits for the next message at once instead of first asking for what is
// available, which would most likely be nothing. Each pull request costs the server and the
// client a subscription and a round trip; a consumer fetching small batches sent three per
// batch (docs/BENCHMARKS.md). What it gives up: after a short batch, messages that arrived
// meanwhile come one first, then the rest within the Linger.
type Fetcher struct {
	Consumer jetstream.Consumer
	Max      int
	MaxWait  time.Duration

	drained bool // the last batch was short of Max
}

// Fetch takes up to Max messages: no message and no error means none arrived within MaxWait.
func (f *Fetcher) Fetch(ctx context.Context) ([]jetstream.Msg, error) {
	msgs, err := fetchAvailable(ctx, f.Consumer, f.Max, f.MaxWait, Linger, f.drained)
	f.drained = err == nil && len(msgs) < f.Max
	return msgs, err
}

// fetchAvailable is FetchAvailable; drained skips the first request for what is available.
func fetchAvailable(ctx context.Context, c jetstream.Consumer, max int, maxWait, linger time.Duration, drained bool) ([]jetstream.Msg, error) {
	var msgs []jetstream.Msg
	if !drained {
		var err error
		if msgs, err = collect(c.FetchNoWait(max)); err != nil {
			return msgs, err
		}
	}
	if len(msgs) == 0 {
		fctx, cancel := context.WithTimeout(ctx, maxWait)
		var err error
		msgs, err = collect(c.Fetch(1, jetstream.FetchContext(fctx)))
		cancel()
		if err != nil || len(msgs) == 0 {
			return msgs, err
		}
	}
	if len(msgs) >= max {
		return msgs, nil
	}
	select {
	case <-time.After(linger):
	case <-ctx.Done():
		return msgs, nil // the caller handles or naks what it holds
	}
	rest, err := collect(c.FetchNoWait(max - len(msgs)))
	return append(msgs, rest...), err
}

// Linger is how long FetchAvailable waits for more messages once it holds part of a batch: the
// most latency it adds to a message.
const Linger = 5 * time.Millisecond

func collect(batch jetstream.MessageBatch, err error) ([]jetstream.Msg, error) {
	if err != nil {
		if IsFetchTimeout(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("fetching: %w", err)
	}
	var msgs []jetstream.Msg
	for m := range batch.Messages() {
		msgs = append(msgs, m)
	}
	if err := batch.Error(); err != nil && len(msgs) == 0 && !IsFetchTimeout(err) {
		return nil, fmt.Errorf("fetching: %w", err)
	}
	return msgs, nil
}

// IsFetchTimeout tells whether a fetch error only means that no message came in time.
func IsFetchTimeout(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, jetstream.ErrNoMessages)
}
