package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/pkg/validation"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// Payment ids that make probingHandler fail in the ways a real consumer can.
const (
	stuckPayment   = "pay_stuck"   // fails on every attempt with an error nothing classifies
	limitPayment   = "pay_limit"   // fails with a money limit error, not marked Permanent
	refusedPayment = "pay_refused" // fails with a validation.Error, not marked Permanent
)

// probingHandler applies payment ids like testHandler, but can tell whether its "database"
// answers (Prober), and can be taken down as a whole.
type probingHandler struct {
	mu      sync.Mutex
	applied map[string]int
	down    atomic.Bool
	applies atomic.Int32
	probes  atomic.Int32
}

func newProbingHandler() *probingHandler { return &probingHandler{applied: map[string]int{}} }

func (h *probingHandler) Screen(_ context.Context, msgs []jetstream.Msg) ([]Verdict[string], error) {
	out := make([]Verdict[string], len(msgs))
	for i, m := range msgs {
		msg, _, err := events.Decode(m.Subject(), m.Headers().Get(HeaderContentType), m.Data())
		if err != nil {
			out[i] = Reject[string](err)
			continue
		}
		out[i] = Apply(msg.(*paymentv1.PaymentCreated).GetPaymentId())
	}
	return out, nil
}

func (h *probingHandler) Probe(context.Context) error {
	h.probes.Add(1)
	if h.down.Load() {
		return errors.New("database unreachable")
	}
	return nil
}

func (h *probingHandler) Apply(_ context.Context, ids []string) error {
	h.applies.Add(1)
	if h.down.Load() {
		return errors.New("connection refused")
	}
	for _, id := range ids {
		switch id {
		case stuckPayment:
			return fmt.Errorf("applying %s: something this consumer does not classify", id)
		case limitPayment:
			_, err := money.Move(money.MaxBalance, money.MustParse("0.01"))
			return fmt.Errorf("applying %s: %w", id, err)
		case refusedPayment:
			return fmt.Errorf("applying %s: %w", id, validation.Invalid("merchant_id", "belongs to another company"))
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		h.applied[id]++
	}
	return nil
}

func (h *probingHandler) appliedOnce(ids ...string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if h.applied[id] != 1 {
			return fmt.Errorf("%s applied %d times, want once (applied: %v)", id, h.applied[id], h.applied)
		}
	}
	return nil
}

func (h *probingHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.applied)
}

// The defect of issue 41: one message that fails on every attempt with an error nobody
// classified (the merchant ledger's overflow) was retried for ever and stopped every tenant's
// messages behind it. Now the batch is split, the others are applied, and the message that
// fails alone while the database answers is retried with backoff, then dead-lettered as an
// incident.
func TestRegressionOneUnclassifiedFailureNoLongerStopsEveryTenant(t *testing.T) {
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
	p := newPublisher(t, b)
	var want []string
	for n := 1; n <= 20; n++ {
		id := fmt.Sprint("pay_", n)
		if n == 7 {
			id = stuckPayment
		} else {
			want = append(want, id)
		}
		publishPayment(t, p, n, id)
	}
	h := newProbingHandler()
	runBatchConsumer(t, b, "stuck-test", h, BatchOptions{DeadLetter: dl.SendJetStream, Metrics: metrics,
		MaxFailures: 3, RetryBackoff: 50 * time.Millisecond})

	// The others are applied while the stuck one is still being retried.
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error { return h.appliedOnce(want...) })
	for n := 21; n <= 25; n++ { // and so are those published after it
		id := fmt.Sprint("pay_", n)
		want = append(want, id)
		publishPayment(t, p, n, id)
	}
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error { return h.appliedOnce(want...) })

	letters := deadLetters(t, b.js, 1)
	if got := letters[0].Header.Get(HeaderDLQReasonKind); got != ReasonExhausted {
		t.Errorf("reason kind %q, want %q", got, ReasonExhausted)
	}
	if r := letters[0].Header.Get(HeaderDLQReason); !strings.Contains(r, "failed 3 times") || !strings.Contains(r, "does not classify") {
		t.Errorf("reason %q does not say how often and why it failed", r)
	}
	waitAllAcked(t, b.js, "PAYMENTS", "stuck-test", 25)
	if got := metricValue(t, reg, "bus_consumer_retries_total", map[string]string{"consumer": "stuck-test"}); got != 2 {
		t.Errorf("bus_consumer_retries_total = %v, want 2 (failures 1 and 2; the third dead-letters)", got)
	}
	if got := metricValue(t, reg, "bus_consumer_redeliveries_total", map[string]string{"consumer": "stuck-test"}); got < 2 {
		t.Errorf("bus_consumer_redeliveries_total = %v, want at least 2", got)
	}
	if got := metricValue(t, reg, "bus_dead_letters_total", map[string]string{"consumer": "stuck-test", "reason_kind": ReasonExhausted}); got != 1 {
		t.Errorf("bus_dead_letters_total{exhausted} = %v, want 1", got)
	}
}

// While the dependencies are down, nothing is the messages' fault: however often they fail,
// none is dead-lettered, and all are applied once the database is back.
func TestAnOutageDeadLettersNothingHoweverLongItLasts(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	dl, err := NewDeadLetterer(b.js, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := newPublisher(t, b)
	var want []string
	for n := 1; n <= 5; n++ {
		id := fmt.Sprint("pay_", n)
		want = append(want, id)
		publishPayment(t, p, n, id)
	}
	h := newProbingHandler()
	h.down.Store(true)
	bc := runBatchConsumer(t, b, "outage-test", h, BatchOptions{DeadLetter: dl.SendJetStream,
		MaxFailures: 2, RetryBackoff: 10 * time.Millisecond})
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		if n := h.applies.Load(); n < 6 {
			return fmt.Errorf("%d attempts so far", n)
		}
		return nil
	})
	if got := streamMsgs(t, b.js, DeadLetterStream); got != 0 {
		t.Fatalf("%d dead letters during an outage", got)
	}
	if n := bc.Progress().snapshot().retrying; n != 0 {
		t.Errorf("%d messages counted as failing alone during an outage", n)
	}
	h.down.Store(false)
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error { return h.appliedOnce(want...) })
	waitAllAcked(t, b.js, "PAYMENTS", "outage-test", 5)
	if got := streamMsgs(t, b.js, DeadLetterStream); got != 0 {
		t.Errorf("%d dead letters after the outage", got)
	}
}

// Errors of the money limits and refused inputs are permanent wherever they come from: the
// message goes to the dead-letter stream at once, with its kind, and its neighbours are applied.
func TestLimitsAndRefusedInputsArePermanentWithoutBeingMarked(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	reg := prometheus.NewRegistry()
	dl, err := NewDeadLetterer(b.js, reg)
	if err != nil {
		t.Fatal(err)
	}
	p := newPublisher(t, b)
	publishPayment(t, p, 1, "pay_1")
	publishPayment(t, p, 2, limitPayment)
	publishPayment(t, p, 3, "pay_3")
	publishPayment(t, p, 4, refusedPayment)
	publishPayment(t, p, 5, "pay_5")
	h := newProbingHandler()
	runBatchConsumer(t, b, "limit-test", h, BatchOptions{DeadLetter: dl.SendJetStream, MaxFailures: 100})
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error { return h.appliedOnce("pay_1", "pay_3", "pay_5") })
	kinds := map[string]string{}
	for _, l := range deadLetters(t, b.js, 2) {
		kinds[l.Header.Get(HeaderDLQOriginalSequence)] = l.Header.Get(HeaderDLQReasonKind)
	}
	if kinds["2"] != ReasonLimit || kinds["4"] != ReasonPermanent {
		t.Errorf("reason kinds by sequence %v, want 2: %s, 4: %s", kinds, ReasonLimit, ReasonPermanent)
	}
	if h.count() != 3 {
		t.Errorf("applied %d payments, want 3", h.count())
	}
}

func TestIsPermanentKnowsLimitsOverflowsAndRefusals(t *testing.T) {
	_, overflow := money.MustParse("9223372036854.775807").Add(money.MustParse("1"))
	for _, tc := range []struct {
		err  error
		want bool
		kind string
	}{
		{fmt.Errorf("x: %w", money.ErrBalanceLimit), true, ReasonLimit},
		{fmt.Errorf("x: %w", money.ErrAboveMaxAmount), true, ReasonLimit},
		{fmt.Errorf("x: %w", overflow), true, ReasonLimit},
		{fmt.Errorf("x: %w", validation.Invalid("amount", "no")), true, ReasonPermanent},
		{Exhausted(5, errors.New("boom")), true, ReasonExhausted},
		{Permanent(errors.New("rule")), true, ReasonPermanent},
		{fmt.Errorf("x: %w", events.ErrInvalid), true, ReasonInvalid},
		{errors.New("connection refused"), false, ReasonPermanent},
		{context.DeadlineExceeded, false, ReasonPermanent},
	} {
		if got := IsPermanent(tc.err); got != tc.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if tc.want {
			if got := ReasonKind(tc.err); got != tc.kind {
				t.Errorf("ReasonKind(%v) = %q, want %q", tc.err, got, tc.kind)
			}
		}
	}
}

// fakeClock is a settable clock for Progress.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgressReportsAConsumerThatHasNotAdvancedWhileMessagesWait(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	p := newProgress("ledger", clock.now)
	published := clock.t.Add(-5 * time.Second)
	if err := p.Stalled(time.Minute); err != nil {
		t.Fatalf("a new consumer with nothing pending: %v", err)
	}
	// Fetched a message with 3 behind it, which fails alone.
	p.fetched([]delivery{{streamSeq: 10, delivered: 1, pending: 3, published: published}})
	p.failedAlone(delivery{streamSeq: 10, published: published}, errors.New("boom"))
	clock.t = clock.t.Add(30 * time.Second)
	if err := p.Stalled(time.Minute); err != nil {
		t.Fatalf("30 s without progress, bound 60 s: %v", err)
	}
	if s := p.snapshot(); s.oldestUnapplied != 35*time.Second || s.retrying != 1 || s.pending != 3 {
		t.Fatalf("snapshot %+v, want the failing message 35 s old, 1 retrying, 3 pending", s)
	}
	clock.t = clock.t.Add(31 * time.Second)
	err := p.Stalled(time.Minute)
	if err == nil || !strings.Contains(err.Error(), "ledger stalled") || !strings.Contains(err.Error(), "3 pending") {
		t.Fatalf("61 s without progress: %v", err)
	}
	// It is settled (dead-lettered): the consumer advanced.
	p.settled([]delivery{{streamSeq: 10, published: published}})
	if err := p.Stalled(time.Minute); err != nil {
		t.Fatalf("right after progress: %v", err)
	}
	// Nothing pending, nothing failing: never stalled, however long it is quiet.
	p.fetched([]delivery{{streamSeq: 11, delivered: 2, pending: 0, published: clock.t}})
	p.settled([]delivery{{streamSeq: 11, published: clock.t}})
	clock.t = clock.t.Add(time.Hour)
	if err := p.Stalled(time.Minute); err != nil {
		t.Fatalf("an idle consumer: %v", err)
	}
	if s := p.snapshot(); s.oldestUnapplied != 0 {
		t.Fatalf("an idle consumer's oldest unapplied message is %s old", s.oldestUnapplied)
	}
}

// replyMsg is a delivered message as far as deliveryOf looks at it.
type replyMsg struct {
	jetstream.Msg
	reply string
}

func (m replyMsg) Reply() string { return m.reply }
func (m replyMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return nil, errors.New("not a JetStream message")
}

func TestDeliveryOfReadsBothFormsOfTheAckReply(t *testing.T) {
	ns := int64(1_800_000_000_123_456_789)
	for _, reply := range []string{
		fmt.Sprintf("$JS.ACK.PAYMENTS.ledger.4.1234.77.%d.9", ns),
		fmt.Sprintf("$JS.ACK.hub.ACCHASH.PAYMENTS.ledger.4.1234.77.%d.9.rnd", ns),
		fmt.Sprintf("$JS.ACK.hub.ACCHASH.PAYMENTS.ledger.4.1234.77.%d.9", ns),
	} {
		d, ok := deliveryOf(replyMsg{reply: reply})
		if !ok || d.delivered != 4 || d.streamSeq != 1234 || d.pending != 9 || d.published.UnixNano() != ns {
			t.Errorf("%s: %+v, %v", reply, d, ok)
		}
	}
	if _, ok := deliveryOf(replyMsg{reply: "_INBOX.x"}); ok {
		t.Error("a core NATS reply read as a delivery")
	}
}
