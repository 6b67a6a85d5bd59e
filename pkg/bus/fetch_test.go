package bus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/testkit"
)

// A Fetcher hands over what the consumer has at once (up to Max), and on a quiet consumer
// returns with the first message that arrives instead of waiting for a full batch until
// MaxWait: here MaxWait is an hour, and the test fails if the call is still waiting a minute
// after the message was published.
func TestAFetcherServesAQuietConsumerAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c, publish := treasuryConsumer(t, ConsumerSpec{Stream: "TREASURY", Durable: "fetch-test"})
	for i := range 5 {
		publish(i)
	}
	f := &Fetcher{Consumer: c, Max: 3, MaxWait: time.Hour}
	defer f.Close()
	msgs, err := f.Fetch(ctx)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("available: %d messages, %v", len(msgs), err)
	}
	ack(t, msgs)
	if msgs, err = f.Fetch(ctx); err != nil || len(msgs) != 2 {
		t.Fatalf("the rest: %d messages, %v", len(msgs), err)
	}
	ack(t, msgs)

	got := make(chan []jetstream.Msg, 1)
	go func() {
		m, err := f.Fetch(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- m
	}()
	// The subscription's pull request is pending on the server.
	testkit.WaitFor(t, waitTimeout, 5*time.Millisecond, func() error {
		info, err := c.Info(ctx)
		if err == nil && info.NumWaiting == 0 {
			err = errors.New("no pull request waiting")
		}
		return err
	})
	publish(5)
	select {
	case m := <-got:
		if len(m) != 1 || string(m[0].Data()) != "m5" {
			t.Fatalf("got %d messages", len(m))
		}
		ack(t, m)
	case <-time.After(time.Minute):
		t.Fatal("the Fetcher is still waiting for a full batch a minute after a message arrived")
	}

	// Nothing at all: no messages and no error once MaxWait has passed.
	f.MaxWait = 50 * time.Millisecond
	if m, err := f.Fetch(ctx); err != nil || len(m) != 0 {
		t.Fatalf("empty consumer: %d messages, %v", len(m), err)
	}
}

// A Fetcher hands over every message in order, and asks the server for messages ahead instead
// of once or more per batch: twenty small batches take fewer than twenty pull requests, counted
// on the subject where the server receives them. (Fetching each batch with pull requests of its
// own took two or three per batch.) Idle, it renews its pull request every MaxWait.
func TestAFetcherTakesEveryMessageInOrderWithFewerPullRequestsThanBatchesAndRenewsItsRequestWhenIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, c, publish := treasuryConsumer(t, ConsumerSpec{Stream: "TREASURY", Durable: "fetcher-test"})
	var requests atomic.Int64
	sub, err := b.nc.Subscribe("$JS.API.CONSUMER.MSG.NEXT.TREASURY.fetcher-test", func(*nats.Msg) { requests.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := b.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	f := &Fetcher{Consumer: c, Max: 10, MaxWait: time.Minute}
	defer f.Close()
	next, taken := 0, 0
	const batches = 20
	for range batches {
		for range 2 {
			publish(next)
			next++
		}
		for taken < next {
			msgs, err := f.Fetch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if got := string(m.Data()); got != fmt.Sprintf("m%d", taken) {
					t.Fatalf("message %q, want m%d", got, taken)
				}
				taken++
			}
			ack(t, msgs)
		}
	}
	if err := b.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	n := requests.Load()
	if n == 0 || n >= batches {
		t.Fatalf("%d pull requests for %d batches, want at least one and fewer than the batches", n, batches)
	}

	// A Fetch that finds nothing within MaxWait renews the subscription, so that a pull request
	// the server lost (its consumer's leader died) cannot leave the consumer waiting for ever:
	// each idle Fetch makes a new pull request.
	f.MaxWait = 20 * time.Millisecond
	for range 3 {
		if msgs, err := f.Fetch(ctx); err != nil || len(msgs) != 0 {
			t.Fatalf("idle fetch: %d messages, %v", len(msgs), err)
		}
	}
	if err := b.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if idle := requests.Load() - n; idle < 2 {
		t.Fatalf("%d pull requests over three idle fetches, want a new one for each after the first", idle)
	}
}

// A batch found short waits out the linger and takes what arrived meanwhile: a message that
// arrives while the first one is held is handed over with it. (The linger is five seconds
// here so that the second publish surely lands inside it; Linger is milliseconds.)
func TestAFetcherCompletesAShortBatchWithinTheLinger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c, publish := treasuryConsumer(t, ConsumerSpec{Stream: "TREASURY", Durable: "linger-test"})
	publish(0)
	f := &Fetcher{Consumer: c, Max: 10, MaxWait: time.Hour, linger: 5 * time.Second}
	defer f.Close()
	got := make(chan []jetstream.Msg, 1)
	go func() {
		m, err := f.Fetch(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- m
	}()
	// Once the first message is out to the Fetcher, publish the second.
	testkit.WaitFor(t, waitTimeout, 5*time.Millisecond, func() error {
		info, err := c.Info(ctx)
		if err == nil && info.NumAckPending != 1 {
			err = fmt.Errorf("%d messages out", info.NumAckPending)
		}
		return err
	})
	publish(1)
	m := <-got
	if len(m) != 2 || string(m[0].Data()) != "m0" || string(m[1].Data()) != "m1" {
		t.Fatalf("got %d messages, want m0 and m1 in one batch", len(m))
	}
	ack(t, m)
}

// Close hands back at once the messages the Fetcher's subscription received ahead of a Fetch:
// another Fetcher of the same consumer gets them next, delivered a second time, although the
// consumer's AckWait is an hour (a message left held would come back only after it).
func TestClosingAFetcherHandsBackWhatItHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c, publish := treasuryConsumer(t, ConsumerSpec{Stream: "TREASURY", Durable: "close-test", AckWait: time.Hour})
	for i := range 5 {
		publish(i)
	}
	// Taking the fourth message of four, the subscription asks for more: m4 comes ahead.
	f := &Fetcher{Consumer: c, Max: 4, MaxWait: time.Minute}
	msgs, err := f.Fetch(ctx)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("first fetch: %d messages, %v", len(msgs), err)
	}
	for _, m := range msgs {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, waitTimeout, 5*time.Millisecond, func() error {
		info, err := c.Info(ctx)
		if err == nil && info.NumAckPending != 1 {
			err = fmt.Errorf("%d messages out", info.NumAckPending)
		}
		return err
	})
	f.Close()

	g := &Fetcher{Consumer: c, Max: 4, MaxWait: time.Minute}
	defer g.Close()
	msgs, err = g.Fetch(ctx)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("after Close: %d messages, %v", len(msgs), err)
	}
	md, err := msgs[0].Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if string(msgs[0].Data()) != "m4" || md.NumDelivered != 2 {
		t.Fatalf("message %q delivered %d times, want m4 delivered twice", msgs[0].Data(), md.NumDelivered)
	}
	ack(t, msgs)
}

// treasuryConsumer creates the pull consumer spec (of TREASURY) on a fresh server, and returns
// it with a function that publishes the message "m<i>" to the stream.
func treasuryConsumer(t *testing.T, spec ConsumerSpec) (testBus, jetstream.Consumer, func(i int)) {
	t.Helper()
	b := newTestBus(t)
	c, err := EnsurePullConsumer(context.Background(), b.js, spec)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(i int) {
		t.Helper()
		if _, err := b.js.Publish(context.Background(), "treasury.test.c1.deposit_detected", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return b, c, publish
}

func ack(t *testing.T, msgs []jetstream.Msg) {
	t.Helper()
	for _, m := range msgs {
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
}

// A pull consumer's messages held by a runner that died are delivered again after
// DefaultPullAckWait (15 s), not the minute of the push consumers: recovery from a killed
// consumer waits that long.
func TestPullConsumersWaitDefaultPullAckWait(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	c, err := EnsurePullConsumer(context.Background(), b.js, ConsumerSpec{Stream: "PAYMENTS", Durable: "pull-ackwait"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CachedInfo().Config.AckWait; got != DefaultPullAckWait {
		t.Fatalf("AckWait %s, want %s", got, DefaultPullAckWait)
	}
}
