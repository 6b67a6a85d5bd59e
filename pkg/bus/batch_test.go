package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/testkit"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// Payment ids that make testHandler misbehave.
const (
	skipPayment        = "pay_skip"         // Screen skips it
	permanentPayment   = "pay_permanent"    // Apply refuses it for good
	applyPanicPayment  = "pay_apply_panic"  // Apply panics on it
	screenPanicPayment = "pay_screen_panic" // Screen panics on it
)

// testHandler decodes payment.created events and applies their payment ids to a set, as a
// projection would to a table: applying an id twice changes nothing, and it counts how many
// times each id was applied (committed).
type testHandler struct {
	mu       sync.Mutex
	applied  map[string]int
	failures atomic.Int32 // Apply calls still to fail transiently
	applies  atomic.Int32
}

func newTestHandler() *testHandler { return &testHandler{applied: map[string]int{}} }

func (h *testHandler) Screen(_ context.Context, msgs []jetstream.Msg) ([]Verdict[string], error) {
	out := make([]Verdict[string], len(msgs))
	for i, m := range msgs {
		msg, _, err := events.Decode(m.Subject(), m.Headers().Get(HeaderContentType), m.Data())
		if err != nil {
			out[i] = Reject[string](err)
			continue
		}
		switch id := msg.(*paymentv1.PaymentCreated).GetPaymentId(); id {
		case skipPayment:
			out[i] = Skip[string]()
		case screenPanicPayment:
			panic("screening " + id)
		default:
			out[i] = Apply(id)
		}
	}
	return out, nil
}

func (h *testHandler) Apply(_ context.Context, ids []string) error {
	h.applies.Add(1)
	if h.failures.Add(-1) >= 0 {
		return errors.New("database unavailable")
	}
	for _, id := range ids {
		switch id {
		case permanentPayment:
			return Permanent(fmt.Errorf("payment %s can never be applied", id))
		case applyPanicPayment:
			panic("applying " + id)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		h.applied[id]++
	}
	return nil
}

// waitApplied waits until exactly ids are applied, each once.
func (h *testHandler) waitApplied(t *testing.T, ids ...string) {
	t.Helper()
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.applied) != len(ids) {
			return fmt.Errorf("applied %v, want %v", h.applied, ids)
		}
		for _, id := range ids {
			if h.applied[id] != 1 {
				return fmt.Errorf("applied %v, want each of %v once", h.applied, ids)
			}
		}
		return nil
	})
}

func publishPayment(t *testing.T, p *Publisher, n int, paymentID string) {
	t.Helper()
	ev := paymentCreated(n)
	ev.PaymentId = paymentID
	if err := p.PublishEvent(context.Background(), ev); err != nil {
		t.Fatalf("publish %s: %v", paymentID, err)
	}
}

// runBatchConsumer runs a BatchConsumer of a new pull consumer on PAYMENTS until the test ends.
func runBatchConsumer(t *testing.T, b testBus, durable string, h BatchHandler[string], o BatchOptions) *BatchConsumer[string] {
	t.Helper()
	c, err := EnsurePullConsumer(context.Background(), b.js, paymentsSpec(durable))
	if err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = testLogger()
	}
	bc, err := NewBatchConsumer(c, durable, h, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return bc
}

func TestABatchConsumerDeadLettersOnlyWhatCanNeverBeAppliedAndAppliesTheRest(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	reg := prometheus.NewRegistry()
	dl, err := NewDeadLetterer(b.js, reg)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := NewConsumerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	garbage := []byte{0xff, 0xff, 0xff, 0xff}
	publishRaw(t, b.js, testSubject, garbage, map[string]string{
		nats.MsgIdHdr: "garbage-1", HeaderContentType: events.ContentTypeProtobuf, "X-Origin": "test",
	})
	invalid := paymentCreated(2)
	invalid.Amount = "12.1234567"
	invalidBytes, err := events.Marshal(invalid)
	if err != nil {
		t.Fatal(err)
	}
	publishRaw(t, b.js, testSubject, invalidBytes, map[string]string{nats.MsgIdHdr: eventID(2)})
	p := newPublisher(t, b)
	publishPayment(t, p, 3, "pay_3")
	publishPayment(t, p, 4, permanentPayment)
	publishPayment(t, p, 5, applyPanicPayment)
	publishPayment(t, p, 6, screenPanicPayment)
	publishPayment(t, p, 7, skipPayment)
	publishPayment(t, p, 8, "pay_8")

	h := newTestHandler()
	runBatchConsumer(t, b, "poison-test", h, BatchOptions{DeadLetter: dl.SendJetStream, Metrics: metrics})

	h.waitApplied(t, "pay_3", "pay_8")
	waitAllAcked(t, b.js, "PAYMENTS", "poison-test", 8)
	want := map[string]struct {
		seq          int
		kind, reason string
	}{
		"garbage-1": {1, ReasonUndecodable, "undecodable"},
		eventID(2):  {2, ReasonInvalid, "more than 6 decimals"},
		eventID(4):  {4, ReasonPermanent, "can never be applied"},
		eventID(5):  {5, ReasonPanic, "applying " + applyPanicPayment},
		eventID(6):  {6, ReasonPanic, "screening " + screenPanicPayment},
	}
	for _, dl := range deadLetters(t, b.js, len(want)) {
		origID := dl.Header.Get(HeaderDLQOriginalMsgID)
		w, ok := want[origID]
		if !ok {
			t.Errorf("unexpected dead letter of %q", origID)
			continue
		}
		delete(want, origID)
		if dl.Subject != "deadletter.poison-test" {
			t.Errorf("dead letter of %s on %q", origID, dl.Subject)
		}
		for k, v := range map[string]string{
			HeaderDLQOriginalSubject: testSubject, HeaderDLQConsumer: "poison-test", HeaderDLQReasonKind: w.kind,
			HeaderDLQOriginalStream: "PAYMENTS", HeaderDLQOriginalSequence: fmt.Sprint(w.seq),
			nats.MsgIdHdr: "poison-test:" + origID,
		} {
			if got := dl.Header.Get(k); got != v {
				t.Errorf("dead letter of %s: %s = %q, want %q", origID, k, got, v)
			}
		}
		if r := dl.Header.Get(HeaderDLQReason); !strings.Contains(r, w.reason) {
			t.Errorf("dead letter of %s: reason %q does not mention %q", origID, r, w.reason)
		}
	}
	for id := range want {
		t.Errorf("no dead letter of %s", id)
	}
	for outcome, n := range map[string]float64{OutcomeAcked: 3, OutcomeDeadLettered: 5} {
		labels := map[string]string{"consumer": "poison-test", "outcome": outcome}
		if got := metricValue(t, reg, "bus_consumer_messages_total", labels); got != n {
			t.Errorf("bus_consumer_messages_total{%s} = %v, want %v", outcome, got, n)
		}
	}
	// Every message was fetched once, in one batch or more.
	batches := map[string]string{"consumer": "poison-test"}
	if n, sum := metricValue(t, reg, "bus_consumer_batch_messages", batches), histogramSum(t, reg, "bus_consumer_batch_messages", batches); n < 1 || sum != 8 {
		t.Errorf("bus_consumer_batch_messages: %v batches of %v messages in all, want 1 or more of 8", n, sum)
	}
}

func TestABatchWhoseApplyFailedIsDeliveredAgainAndAppliedOnce(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	reg := prometheus.NewRegistry()
	metrics, err := NewConsumerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p := newPublisher(t, b)
	for n := 1; n <= 3; n++ {
		publishPayment(t, p, n, fmt.Sprint("pay_", n))
	}
	h := newTestHandler()
	h.failures.Store(2)
	var afterApply atomic.Int32
	runBatchConsumer(t, b, "retry-test", h, BatchOptions{
		DeadLetter: func(context.Context, string, jetstream.Msg, error) error { return errors.New("nothing to dead-letter") },
		AfterApply: func(context.Context) { afterApply.Add(1) }, Metrics: metrics,
	})
	h.waitApplied(t, "pay_1", "pay_2", "pay_3")
	waitAllAcked(t, b.js, "PAYMENTS", "retry-test", 3)
	if got := h.applies.Load(); got < 3 {
		t.Errorf("%d Apply calls, want at least 3 (two failed)", got)
	}
	if got := afterApply.Load(); got < 1 || got > h.applies.Load()-2 {
		t.Errorf("AfterApply ran %d times for %d Apply calls of which 2 failed", got, h.applies.Load())
	}
	if got := metricValue(t, reg, "bus_consumer_messages_total", map[string]string{"consumer": "retry-test", "outcome": OutcomeNacked}); got < 2 {
		t.Errorf("%v messages handed back, want at least 2", got)
	}
}

func TestABatchFetchedWithoutHoldGoesBackToJetStream(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	p := newPublisher(t, b)
	publishPayment(t, p, 1, "pay_1")
	publishPayment(t, p, 2, "pay_2")
	c, err := EnsurePullConsumer(context.Background(), b.js, paymentsSpec("hold-test"))
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHandler()
	var held atomic.Bool
	bc, err := NewBatchConsumer(c, "hold-test", h, BatchOptions{Logger: testLogger(), Hold: held.Load,
		DeadLetter: func(context.Context, string, jetstream.Msg, error) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	n, err := bc.Step(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("step without the hold: %d messages, err %v; want 2", n, err)
	}
	if got := h.applies.Load(); got != 0 {
		t.Fatalf("%d Apply calls without the hold", got)
	}
	held.Store(true)
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		if _, err := bc.Step(context.Background()); err != nil {
			return err
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.applied) != 2 {
			return fmt.Errorf("applied %v", h.applied)
		}
		return nil
	})
	h.waitApplied(t, "pay_1", "pay_2")
}

func TestAMessageWhoseDeadLetterCannotBeStoredIsKeptUntilItIs(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	dl, err := NewDeadLetterer(b.js, nil)
	if err != nil {
		t.Fatal(err)
	}
	publishRaw(t, b.js, testSubject, []byte("not an event"), map[string]string{nats.MsgIdHdr: "garbage-1"})
	p := newPublisher(t, b)
	publishPayment(t, p, 2, "pay_2")
	var attempts atomic.Int32
	h := newTestHandler()
	runBatchConsumer(t, b, "dlq-down-test", h, BatchOptions{
		DeadLetter: func(ctx context.Context, consumer string, m jetstream.Msg, reason error) error {
			if attempts.Add(1) <= 2 {
				return errors.New("dead-letter stream unavailable")
			}
			return dl.SendJetStream(ctx, consumer, m, reason)
		},
	})
	h.waitApplied(t, "pay_2")
	waitAllAcked(t, b.js, "PAYMENTS", "dlq-down-test", 2)
	got := deadLetters(t, b.js, 1)[0]
	if id := got.Header.Get(HeaderDLQOriginalMsgID); id != "garbage-1" {
		t.Errorf("dead letter of %q, want garbage-1", id)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d dead-letter attempts, want 3", n)
	}
}

func TestABatchConsumerNeedsADeadLetterFunction(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	c, err := EnsurePullConsumer(context.Background(), b.js, paymentsSpec("no-dlq-test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBatchConsumer[string](c, "no-dlq-test", newTestHandler(), BatchOptions{}); err == nil {
		t.Error("a batch consumer without a dead-letter function was created")
	}
}

// stallingHandler is a testHandler whose Apply waits for release and fails if its context has
// ended meanwhile, as a transaction cancelled halfway would.
type stallingHandler struct {
	*testHandler
	started, release chan struct{}
}

func (h *stallingHandler) Apply(ctx context.Context, ids []string) error {
	close(h.started)
	<-h.release
	if err := ctx.Err(); err != nil {
		return err
	}
	return h.testHandler.Apply(ctx, ids)
}

// With FinishBatch, a batch fetched before Run's context ends is still applied and
// acknowledged: a partition given back halfway through a batch would otherwise leave its
// messages to a redelivery after later ones.
func TestABatchUnderwayFinishesAfterTheConsumerIsStopped(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	p := newPublisher(t, b)
	publishPayment(t, p, 1, "pay_1")
	c, err := EnsurePullConsumer(context.Background(), b.js, paymentsSpec("finish-test"))
	if err != nil {
		t.Fatal(err)
	}
	h := &stallingHandler{testHandler: newTestHandler(), started: make(chan struct{}), release: make(chan struct{})}
	bc, err := NewBatchConsumer(c, "finish-test", BatchHandler[string](h), BatchOptions{Logger: testLogger(),
		FinishBatch: waitTimeout, DeadLetter: func(context.Context, string, jetstream.Msg, error) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := bc.Step(ctx)
		done <- err
	}()
	<-h.started
	cancel()
	close(h.release)
	if err := <-done; err != nil {
		t.Fatalf("the step stopped halfway: %v", err)
	}
	h.waitApplied(t, "pay_1")
	waitAllAcked(t, b.js, "PAYMENTS", "finish-test", 1)
}
