package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/logx"
	"github.com/payplat/platform/pkg/testkit"
)

func TestPoisonMessagesAreDeadLetteredAndDoNotBlock(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	reg := prometheus.NewRegistry()

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
	if err := newPublisher(t, b).PublishEvent(context.Background(), paymentCreated(3), paymentCreated(4)); err != nil {
		t.Fatalf("publish: %v", err)
	}

	// MaxAckPending 1: a poison message that were never settled would block the others.
	var rec recorder
	startRouter(t, testRouterConfig(b, reg), paymentsSpec("poison-test"), rec.handle)

	rec.waitIDs(t, eventID(3), eventID(4))
	waitAllAcked(t, b.js, "PAYMENTS", "poison-test", 4)
	dls := deadLetters(t, b.js, 2)

	cases := []struct {
		origID, kind, reason string
		data                 []byte
	}{
		{"garbage-1", ReasonUndecodable, "undecodable", garbage},
		{eventID(2), ReasonInvalid, "more than 6 decimals", invalidBytes},
	}
	for i, c := range cases {
		dl := dls[i]
		if dl.Subject != "deadletter.poison-test" || string(dl.Data) != string(c.data) {
			t.Errorf("dead letter %d: subject %q data %x", i, dl.Subject, dl.Data)
		}
		for k, want := range map[string]string{
			HeaderDLQOriginalSubject: testSubject, HeaderDLQConsumer: "poison-test",
			HeaderDLQOriginalMsgID: c.origID, HeaderDLQReasonKind: c.kind, HeaderDLQOriginalStream: "PAYMENTS",
			HeaderDLQOriginalSequence: fmt.Sprint(i + 1), nats.MsgIdHdr: "poison-test:" + c.origID,
		} {
			if got := dl.Header.Get(k); got != want {
				t.Errorf("dead letter %d: %s = %q, want %q", i, k, got, want)
			}
		}
		if r := dl.Header.Get(HeaderDLQReason); !strings.Contains(r, c.reason) {
			t.Errorf("dead letter %d: reason %q does not mention %q", i, r, c.reason)
		}
		if _, err := time.Parse(time.RFC3339, dl.Header.Get(HeaderDLQFailedAt)); err != nil {
			t.Errorf("dead letter %d: failed at: %v", i, err)
		}
		if got := metricValue(t, reg, "bus_dead_letters_total", map[string]string{"consumer": "poison-test", "reason_kind": c.kind}); got != 1 {
			t.Errorf("bus_dead_letters_total{%s} = %v, want 1", c.kind, got)
		}
	}
	if got := dls[0].Header.Get("X-Origin"); got != "test" {
		t.Errorf("original header X-Origin = %q, want it preserved", got)
	}
	if got := metricValue(t, reg, "bus_handler_duration_seconds", map[string]string{"consumer": "poison-test", "outcome": OutcomeDeadLettered}); got != 2 {
		t.Errorf("dead-lettered outcomes %v, want 2", got)
	}
	if got := metricValue(t, reg, "bus_handler_duration_seconds", map[string]string{"consumer": "poison-test", "outcome": OutcomeAcked}); got != 2 {
		t.Errorf("acked outcomes %v, want 2", got)
	}
}

func TestHandPublishedProtoJSONIsHandled(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	withID, withoutID := paymentCreated(1), paymentCreated(2)
	for i, ev := range []proto.Message{withID, withoutID} {
		data, err := protojson.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]string{HeaderContentType: "application/json; charset=utf-8"}
		if i == 0 {
			h[nats.MsgIdHdr] = eventID(1)
		}
		publishRaw(t, b.js, testSubject, data, h)
	}

	var rec recorder
	startRouter(t, testRouterConfig(b, nil), paymentsSpec("json-test"), rec.handle)
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		if n := len(rec.ids()); n != 2 {
			return fmt.Errorf("%d events handled, want 2", n)
		}
		return nil
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, want := range []proto.Message{withID, withoutID} {
		ev := rec.events[i]
		if !proto.Equal(ev.Msg, want) || ev.Subject != testSubject || ev.Spec.Type != "payment.created" {
			t.Errorf("event %d: %v on %q (%s), want %v", i, ev.Msg, ev.Subject, ev.Spec.Type, want)
		}
	}
	if got := rec.events[0].Raw.UUID; got != eventID(1) {
		t.Errorf("UUID %q, want the Nats-Msg-Id %q", got, eventID(1))
	}
	if got := rec.events[1].Raw.UUID; got == "" || got == eventID(1) {
		t.Errorf("UUID of a message without Nats-Msg-Id %q, want a generated one", got)
	}
	if n := streamMsgs(t, b.js, DeadLetterStream); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
}

// attempts records the attempts of a handler: when, and on which delivery.
type attempts struct {
	mu  sync.Mutex
	at  []time.Time
	dlv []string
}

func (a *attempts) add(ev Event) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at = append(a.at, time.Now())
	a.dlv = append(a.dlv, ev.Raw.Metadata.Get(MetadataDelivered))
	return len(a.at)
}

func (a *attempts) snapshot() ([]time.Time, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.at...), append([]string(nil), a.dlv...)
}

var errFlaky = errors.New("database unavailable")

func TestTransientErrorIsRetriedAndSucceeds(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	var a attempts
	startRouter(t, testRouterConfig(b, nil), paymentsSpec("transient-test"), func(ctx context.Context, ev Event) error {
		if logx.EventID(ctx) != eventID(1) || logx.CompanyID(ctx) != testCompany {
			return Permanent(fmt.Errorf("context not tagged for logging: %q %q", logx.EventID(ctx), logx.CompanyID(ctx)))
		}
		if a.add(ev) < 3 {
			return errFlaky
		}
		return nil
	})
	if err := newPublisher(t, b).PublishEvent(context.Background(), paymentCreated(1)); err != nil {
		t.Fatal(err)
	}
	waitAllAcked(t, b.js, "PAYMENTS", "transient-test", 1)
	if _, dlv := a.snapshot(); strings.Join(dlv, ",") != "1,1,1" {
		t.Errorf("deliveries of the attempts %v, want three attempts on the first delivery", dlv)
	}
	if n := streamMsgs(t, b.js, DeadLetterStream); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
}

func TestPersistentTransientErrorIsRedeliveredNotDeadLettered(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	var a attempts
	startRouter(t, testRouterConfig(b, nil), paymentsSpec("redeliver-test"), func(_ context.Context, ev Event) error {
		a.add(ev)
		return errFlaky
	})
	if err := newPublisher(t, b).PublishEvent(context.Background(), paymentCreated(1)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		if _, dlv := a.snapshot(); len(dlv) < 5 {
			return fmt.Errorf("attempts on deliveries %v, want a second delivery", dlv)
		}
		return nil
	})
	at, dlv := a.snapshot()
	if strings.Join(dlv[:5], ",") != "1,1,1,1,2" {
		t.Errorf("deliveries of the attempts %v, want 4 attempts (3 retries) on delivery 1, then delivery 2", dlv)
	}
	// The NAK is delayed by AckWait: no busy redelivery loop.
	if gap := at[4].Sub(at[3]); gap < testAckWait-300*time.Millisecond {
		t.Errorf("redelivered %v after the last retry, want about AckWait %v", gap, testAckWait)
	}
	if n := streamMsgs(t, b.js, DeadLetterStream); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
}

func TestMaxDeliverExhaustedIsDeadLettered(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	spec := paymentsSpec("exhaust-test")
	spec.MaxDeliver = 2
	var rec recorder
	startRouter(t, testRouterConfig(b, nil), spec, func(ctx context.Context, ev Event) error {
		if ev.Raw.UUID == eventID(1) {
			return errFlaky
		}
		return rec.handle(ctx, ev)
	})
	if err := newPublisher(t, b).PublishEvent(context.Background(), paymentCreated(1), paymentCreated(2)); err != nil {
		t.Fatal(err)
	}
	dl := deadLetters(t, b.js, 1)[0]
	if kind := dl.Header.Get(HeaderDLQReasonKind); kind != ReasonExhausted {
		t.Errorf("reason kind %q, want %q", kind, ReasonExhausted)
	}
	if r := dl.Header.Get(HeaderDLQReason); !strings.Contains(r, errFlaky.Error()) || !strings.Contains(r, "2 deliveries") {
		t.Errorf("reason %q, want the handler's error after 2 deliveries", r)
	}
	rec.waitIDs(t, eventID(2))
	waitAllAcked(t, b.js, "PAYMENTS", "exhaust-test", 2)
}

func TestPanicIsDeadLetteredAndTheProcessGoesOn(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	var rec recorder
	startRouter(t, testRouterConfig(b, nil), paymentsSpec("panic-test"), func(ctx context.Context, ev Event) error {
		if ev.Raw.UUID == eventID(1) {
			panic("nil map somewhere")
		}
		return rec.handle(ctx, ev)
	})
	if err := newPublisher(t, b).PublishEvent(context.Background(), paymentCreated(1), paymentCreated(2)); err != nil {
		t.Fatal(err)
	}
	rec.waitIDs(t, eventID(2))
	dl := deadLetters(t, b.js, 1)[0]
	if kind := dl.Header.Get(HeaderDLQReasonKind); kind != ReasonPanic {
		t.Errorf("reason kind %q, want %q", kind, ReasonPanic)
	}
	if r := dl.Header.Get(HeaderDLQReason); !strings.Contains(r, "nil map somewhere") {
		t.Errorf("reason %q, want the panic value", r)
	}
	waitAllAcked(t, b.js, "PAYMENTS", "panic-test", 2)
}

func TestANewRouterResumesFromTheDurable(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	pub := newPublisher(t, b)
	ctx := context.Background()

	var first recorder
	stop := startRouter(t, testRouterConfig(b, nil), paymentsSpec("resume-test"), first.handle)
	if err := pub.PublishEvent(ctx, paymentCreated(1)); err != nil {
		t.Fatal(err)
	}
	first.waitIDs(t, eventID(1))
	waitAllAcked(t, b.js, "PAYMENTS", "resume-test", 1)
	stop()

	// Published while no router runs.
	if err := pub.PublishEvent(ctx, paymentCreated(2), paymentCreated(3)); err != nil {
		t.Fatal(err)
	}
	c, err := b.js.PushConsumer(ctx, "PAYMENTS", "resume-test")
	if err != nil {
		t.Fatalf("the durable is gone after Close: %v", err)
	}
	// Both are unacknowledged. (Right after an unsubscribe JetStream may still push one to
	// the departed queue group; it then comes back after AckWait.)
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		info, err := c.Info(ctx)
		if err != nil || info.AckFloor.Stream != 1 || info.NumPending+uint64(info.NumAckPending) != 2 {
			return fmt.Errorf("durable after close: %+v, %v; want 2 unacknowledged", info, err)
		}
		return nil
	})

	var second recorder
	startRouter(t, testRouterConfig(b, nil), paymentsSpec("resume-test"), second.handle)
	second.waitIDs(t, eventID(2), eventID(3))
	waitAllAcked(t, b.js, "PAYMENTS", "resume-test", 3)
	if ids := second.ids(); len(ids) != 2 {
		t.Errorf("second router handled %v, want only the two new events", ids)
	}
}

func TestTransientErrorFollowsTheConsumerBackOff(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	spec := paymentsSpec("backoff-test")
	spec.BackOff = []time.Duration{2500 * time.Millisecond, 3500 * time.Millisecond}
	var a attempts
	startRouter(t, testRouterConfig(b, nil), spec, func(_ context.Context, ev Event) error {
		a.add(ev)
		return errFlaky
	})
	if err := newPublisher(t, b).PublishEvent(context.Background(), paymentCreated(1)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		if _, dlv := a.snapshot(); len(dlv) < 9 {
			return fmt.Errorf("attempts on deliveries %v, want a third delivery", dlv)
		}
		return nil
	})
	at, dlv := a.snapshot()
	if strings.Join(dlv[:9], ",") != "1,1,1,1,2,2,2,2,3" {
		t.Fatalf("deliveries of the attempts %v", dlv)
	}
	for i, step := range spec.BackOff {
		gap := at[4*(i+1)].Sub(at[4*(i+1)-1])
		if gap < step-300*time.Millisecond || gap > step+time.Second {
			t.Errorf("redelivery %d came %v after the failure, want about %v", i+1, gap, step)
		}
	}
}
