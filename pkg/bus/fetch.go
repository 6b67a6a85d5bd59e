package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Fetcher takes batches from a pull consumer through one long-lived pull subscription
// (jetstream's Messages iterator), one caller at a time: what the subscription holds, else it
// waits up to MaxWait for one message, and a batch found short is completed by what arrives
// within Linger. A quiet consumer is served as soon as a message arrives, a busy one in full
// batches.
//
// The subscription asks the server for up to Max messages ahead and asks for more when half of
// them are taken, so a consumer sends a pull request every Max/2 messages instead of two or
// three per batch, each with a subscription of its own (what fetching cost the server and the
// consumers at moderate rates: docs/BENCHMARKS.md), and the next batch arrives while the last
// one is applied. What it changes: the messages it holds are delivered to this consumer and
// count against the consumer's AckWait and MaxAckPending before they are handed over. Close
// hands them back to JetStream at once; a consumer killed holding them has them delivered
// again after AckWait, as it would the batch it was applying.
type Fetcher struct {
	Consumer jetstream.Consumer
	Max      int
	MaxWait  time.Duration

	linger time.Duration // 0: Linger
	it     jetstream.MessagesContext
}

// Fetch takes up to Max messages: no message and no error means none arrived within MaxWait
// (or ctx ended). Then, or on an error, it stops the subscription, handing back what it held;
// the next Fetch starts a new one.
func (f *Fetcher) Fetch(ctx context.Context) ([]jetstream.Msg, error) {
	if f.it == nil {
		it, err := f.Consumer.Messages(jetstream.PullMaxMessages(f.Max))
		if err != nil {
			return nil, fmt.Errorf("fetching: %w", err)
		}
		f.it = it
	}
	wctx, cancel := context.WithTimeout(ctx, f.MaxWait)
	first, err := f.it.Next(jetstream.NextContext(wctx))
	cancel()
	if err != nil {
		// Nothing within MaxWait (or ctx ended): renew the subscription on the next Fetch. A
		// pull request can be lost without a word to the client: the server that held it (the
		// consumer's leader) died, and its successor does not know it. The subscription would
		// then wait for ever, believing its request pending; nats.go's heartbeat check, which
		// would notice, runs only within one Next, and MaxWait keeps each Next shorter than
		// two heartbeats. A quiet consumer makes one pull request per MaxWait, as a Fetch did.
		f.Close()
		if IsFetchTimeout(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("fetching: %w", err)
	}
	msgs := []jetstream.Msg{first}
	linger := f.linger
	if linger <= 0 {
		linger = Linger
	}
	lctx, cancel := context.WithTimeout(ctx, linger)
	defer cancel()
	for len(msgs) < f.Max {
		m, err := f.it.Next(jetstream.NextContext(lctx))
		if err != nil {
			// The linger is over, or the subscription failed: hand over what is held, the
			// next Fetch reports the failure.
			break
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Close stops the subscription and hands back to JetStream the messages it held and were
// not fetched, so that they are delivered again at once (to this consumer's next Fetch or to
// another replica) instead of after AckWait. A Fetcher can fetch again after Close.
func (f *Fetcher) Close() {
	if f.it == nil {
		return
	}
	it := f.it
	f.it = nil
	// Drain unsubscribes and keeps what the server sent before it saw the unsubscription.
	it.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var held []jetstream.Msg
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			break
		}
		held = append(held, m)
	}
	it.Stop()
	// Handed back only once the drain is over: the server then knows that nobody listens on
	// the subscription's inbox, so it redelivers each to another fetch of the consumer at once.
	// A Nak while draining could be redelivered to this subscription's own pull request, still
	// pending on the server, and bounce back and forth until the drain ends.
	for _, m := range held {
		_ = m.Nak()
	}
}

// closeTimeout bounds how long Close waits for the messages in flight to the subscription: a
// message it does not hand back is delivered again after AckWait.
const closeTimeout = 2 * time.Second

// Linger is how long Fetch waits for more messages once it holds part of a batch: the most
// latency it adds to a message. At moderate rates a consumer would otherwise apply and commit
// one or two messages at a time, spending on transactions several times the CPU per message
// of a full batch, so that a moderately loaded stack could fall behind.
const Linger = 5 * time.Millisecond

// IsFetchTimeout tells whether a fetch error only means that no message came in time.
func IsFetchTimeout(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, jetstream.ErrNoMessages)
}
