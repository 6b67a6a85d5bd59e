package relay

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/testkit"
)

func init() { testkit.RegisterHelper("relay-killed-mid-batch", relayKilledMidBatch) }

// killingJetStream is JetStream for a relay that is killed (SIGKILL) right after it sent its
// n-th message: the acknowledgements of that batch may or may not be in, its checkpoint is not
// written.
type killingJetStream struct {
	jetstream.JetStream
	after int64
	sent  atomic.Int64
}

func (k *killingJetStream) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	f, err := k.JetStream.PublishMsgAsync(m, opts...)
	if k.sent.Add(1) == k.after {
		_ = k.JetStream.Conn().Flush() // the message reaches the server; then the process dies
		testkit.KillSelf()
	}
	return f, err
}

// relayKilledMidBatch runs the relay of the database and NATS server its environment names
// until it kills itself after sending RELAY_KILL_AFTER messages.
func relayKilledMidBatch() int {
	after, _ := strconv.ParseInt(os.Getenv("RELAY_KILL_AFTER"), 10, 64)
	ctx := context.Background()
	db, err := pg.Connect(ctx, os.Getenv("RELAY_DSN"), "relaytest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	nc, err := nats.Connect(os.Getenv("RELAY_NATS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	js, _ := jetstream.New(nc)
	r, err := New(eventstore.New(db), &killingJetStream{JetStream: js, after: after},
		Config{Name: "merchant", Stream: testStream, BatchSize: 25, PollInterval: 10 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = r.Run(ctx)
	return 3 // never reached: the relay kills itself first
}

// The relay process is killed with SIGKILL in the middle of a batch (some of its messages
// published, their checkpoint not written); the next relay leaves the stream exactly the store,
// in order, nothing lost or doubled (de-duplication window shortest, so only the relay's own
// resynchronisation prevents doubles).
func TestRelayKilledMidBatchLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 100*time.Millisecond)
	e.appendEvents(t, 10, 20)
	helper := testkit.StartHelper(t, "relay-killed-mid-batch", "RELAY_DSN="+e.dsn, "RELAY_NATS="+e.url, "RELAY_KILL_AFTER=63")
	testkit.WaitKilled(t, helper, time.Minute)
	if n := len(e.streamContents(t)); n < 50 || n >= 200 {
		t.Fatalf("the killed relay left %d messages in the stream, want some batches and not all", n)
	}
	time.Sleep(150 * time.Millisecond) // JetStream's de-duplication window passes
	e.appendEvents(t, 3, 1)
	stop := run(e.relay(t, Config{BatchSize: 25}))
	defer stop()
	e.waitForCount(t, 203)
	stop()
	e.assertExactlyTheStore(t)
}
