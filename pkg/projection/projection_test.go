package projection_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const schema = "projtest"

func newDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	set := migrate.Set{Schema: schema, Sources: []fs.FS{eventstore.Migrations, projection.Migrations, os.DirFS("testdata/migrations")}}
	return testkit.NewPool(t, testkit.NewDatabase(t, set), schema)
}

// paymentsProjector keeps one row per payment; a second application of the same event would
// show in the applied counter.
type paymentsProjector struct {
	failOn string // payment id whose event is refused as permanent
}

func (p *paymentsProjector) Name() string { return "test_payments" }

func (p *paymentsProjector) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	pc, ok := ev.Msg.(*paymentv1.PaymentCreated)
	if !ok {
		return fmt.Errorf("%w: unexpected %T", projection.ErrPermanent, ev.Msg)
	}
	if pc.GetPaymentId() == p.failOn {
		return fmt.Errorf("%w: refused %s", projection.ErrPermanent, p.failOn)
	}
	_, err := tx.Exec(ctx, `INSERT INTO test_payments (payment_id, amount, stream_seq) VALUES ($1, $2, $3)
        ON CONFLICT (payment_id) DO UPDATE SET applied = test_payments.applied + 1`,
		pc.GetPaymentId(), pc.GetAmount(), int64(ev.StreamSeq))
	return err
}

func (p *paymentsProjector) Reset(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `TRUNCATE test_payments`)
	return err
}

func payment(i int) *paymentv1.PaymentCreated {
	now := time.Now().UTC()
	return &paymentv1.PaymentCreated{
		Meta: &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.New(now),
			CompanyId: "c1", Environment: "test"},
		PaymentId: fmt.Sprintf("pay_%04d", i), MerchantId: "m1", MerchantWallet: "0xabc",
		Amount: fmt.Sprintf("%d.50", i+1), Status: "PENDING",
		ExpiresAt: now.Add(time.Hour).Format(time.RFC3339), CreatedAt: now.Format(time.RFC3339),
	}
}

type row struct {
	id, amount string
	applied    int
}

func table(t *testing.T, db *pgxpool.Pool) []row {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT payment_id, amount, applied FROM test_payments ORDER BY payment_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.amount, &r.applied); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func assertEachOnce(t *testing.T, rows []row, want int) {
	t.Helper()
	if len(rows) != want {
		t.Fatalf("table has %d rows, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r.applied != 1 {
			t.Fatalf("payment %s applied %d times", r.id, r.applied)
		}
	}
}

func appendPayments(t *testing.T, store *eventstore.Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		e, err := eventstore.NewEvent(payment(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(context.Background(), fmt.Sprintf("pay-%d", i), eventstore.NoStream, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStoreRunnerAppliesEachEventOnceAndRebuildsEqual(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	store := eventstore.New(db)
	appendPayments(t, store, 0, 120)
	r := projection.NewStoreRunner(store, &paymentsProjector{}, projection.StoreRunnerOptions{BatchSize: 50})
	ctx := context.Background()
	n, err := r.CatchUp(ctx)
	if err != nil || n != 120 {
		t.Fatalf("catch up applied %d: %v", n, err)
	}
	// Running again applies nothing: the checkpoint moved with the batches.
	if n, err := r.CatchUp(ctx); err != nil || n != 0 {
		t.Fatalf("second catch up applied %d: %v", n, err)
	}
	live := table(t, db)
	assertEachOnce(t, live, 120)

	rebuilt, err := r.Rebuild(ctx)
	if err != nil || rebuilt != 120 {
		t.Fatalf("rebuild applied %d: %v", rebuilt, err)
	}
	if got := table(t, db); fmt.Sprint(got) != fmt.Sprint(live) {
		t.Fatalf("rebuilt table differs from the live one")
	}
}

// Two replicas of a store-fed projection run at once while events are appended: every event
// applied exactly once.
func TestStoreRunnerReplicasTakeTurns(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	store := eventstore.New(db)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		r := projection.NewStoreRunner(store, &paymentsProjector{}, projection.StoreRunnerOptions{BatchSize: 7, PollInterval: 5 * time.Millisecond})
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.Run(ctx) }()
	}
	appendPayments(t, store, 0, 200)
	testkit.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if n := len(table(t, db)); n != 200 {
			return fmt.Errorf("%d of 200 applied", n)
		}
		return nil
	})
	cancel()
	wg.Wait()
	assertEachOnce(t, table(t, db), 200)
}

func TestStoreRunnerWaitForReadsYourWrites(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	store := eventstore.New(db)
	r := projection.NewStoreRunner(store, &paymentsProjector{}, projection.StoreRunnerOptions{PollInterval: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	e, _ := eventstore.NewEvent(payment(1))
	res, err := store.Append(ctx, "pay-1", eventstore.NoStream, e)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := r.WaitFor(wctx, res.Last); err != nil {
		t.Fatal(err)
	}
	if len(table(t, db)) != 1 {
		t.Fatal("WaitFor returned before the event was in the read table")
	}
}

// --- stream-fed ---

type streamEnv struct {
	db      *pgxpool.Pool
	nc      *nats.Conn
	js      jetstream.JetStream
	cons    jetstream.Consumer
	mu      sync.Mutex
	letters []string // reasons of dead letters
}

func newStreamEnv(t *testing.T) *streamEnv {
	t.Helper()
	e := &streamEnv{db: newDB(t)}
	e.nc = testkit.ConnectNATS(t)
	e.js, _ = jetstream.New(e.nc)
	ctx := context.Background()
	if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "PAYMENTS", Subjects: []string{"payment.>"}}); err != nil {
		t.Fatal(err)
	}
	var err error
	e.cons, err = e.js.CreateOrUpdateConsumer(ctx, "PAYMENTS", jetstream.ConsumerConfig{
		Durable: "test-payments", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *streamEnv) runner(t *testing.T, p projection.Projector) *projection.StreamRunner {
	t.Helper()
	r, err := projection.NewStreamRunner(e.db, e.cons, "test-payments", p, projection.StreamRunnerOptions{
		BatchSize: 50, MaxWait: 50 * time.Millisecond,
		DeadLetter: func(ctx context.Context, consumer string, m jetstream.Msg, reason error) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.letters = append(e.letters, m.Subject()+": "+reason.Error())
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (e *streamEnv) publish(t *testing.T, subject, contentType string, data []byte, msgID string) {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set("Content-Type", contentType)
	if msgID != "" {
		m.Header.Set(nats.MsgIdHdr, msgID)
	}
	if _, err := e.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func (e *streamEnv) publishPayment(t *testing.T, p *paymentv1.PaymentCreated, msgID string) {
	t.Helper()
	data, err := events.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := events.SubjectFor(p)
	e.publish(t, subject, events.ContentTypeProtobuf, data, msgID)
}

func drain(t *testing.T, r *projection.StreamRunner) {
	t.Helper()
	for {
		n, err := r.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// A batch delivered again (same events republished under new message ids, as a redelivery
// after a lost ack would look) leaves the read table unchanged.
func TestStreamRunnerRedeliveredBatchChangesNothing(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	r := e.runner(t, &paymentsProjector{})
	var sent []*paymentv1.PaymentCreated
	for i := 0; i < 30; i++ {
		p := payment(i)
		sent = append(sent, p)
		e.publishPayment(t, p, "")
	}
	drain(t, r)
	before := table(t, e.db)
	assertEachOnce(t, before, 30)
	for _, p := range sent {
		e.publishPayment(t, p, uuid.NewString())
	}
	drain(t, r)
	if after := table(t, e.db); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("redelivery changed the table:\nbefore %v\nafter  %v", before, after)
	}
}

// An undecodable message and an invalid one go to dead letter with their reason; the messages
// behind them are applied.
func TestStreamRunnerPoisonGoesToDeadLetterAndDoesNotBlock(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	r := e.runner(t, &paymentsProjector{})
	e.publishPayment(t, payment(0), "")
	e.publish(t, "payment.test.c1.created", events.ContentTypeProtobuf, []byte{0xff, 0xff, 0xff}, "")
	bad := payment(1)
	bad.Amount = "12.1234567"
	data, _ := events.Marshal(bad)
	e.publish(t, "payment.test.c1.created", events.ContentTypeProtobuf, data, "")
	e.publish(t, "payment.test.c1.created", events.ContentTypeJSON, []byte(`{"meta":`), "")
	for i := 2; i < 5; i++ {
		e.publishPayment(t, payment(i), "")
	}
	drain(t, r)
	assertEachOnce(t, table(t, e.db), 4)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.letters) != 3 {
		t.Fatalf("dead letters %v, want 3", e.letters)
	}
	sort.Strings(e.letters)
	for _, l := range e.letters {
		if l == "" {
			t.Fatal("dead letter without reason")
		}
	}
}

// A projector that refuses one event as permanent: only that event is dead-lettered, the rest
// of its batch is applied.
func TestStreamRunnerPermanentFailureIsolatesOneEvent(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	r := e.runner(t, &paymentsProjector{failOn: "pay_0003"})
	for i := 0; i < 8; i++ {
		e.publishPayment(t, payment(i), "")
	}
	drain(t, r)
	assertEachOnce(t, table(t, e.db), 7)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.letters) != 1 {
		t.Fatalf("dead letters %v, want exactly the refused one", e.letters)
	}
}

// A transient failure rolls the batch back and leaves it for redelivery; nothing is
// dead-lettered and nothing is lost.
func TestStreamRunnerTransientFailureRedelivers(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	flaky := &flakyProjector{paymentsProjector: &paymentsProjector{}, failures: 2}
	r := e.runner(t, flaky)
	for i := 0; i < 5; i++ {
		e.publishPayment(t, payment(i), "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	testkit.WaitFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if n := len(table(t, e.db)); n != 5 {
			return fmt.Errorf("%d of 5 applied", n)
		}
		return nil
	})
	assertEachOnce(t, table(t, e.db), 5)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.letters) != 0 {
		t.Fatalf("transient failure dead-lettered %v", e.letters)
	}
}

type flakyProjector struct {
	*paymentsProjector
	mu       sync.Mutex
	failures int
}

func (f *flakyProjector) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	f.mu.Lock()
	fail := f.failures > 0
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if fail {
		return errors.New("database hiccup")
	}
	return f.paymentsProjector.Apply(ctx, tx, ev)
}
