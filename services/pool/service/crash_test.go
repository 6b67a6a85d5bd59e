package service_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/ports"
	"github.com/payplat/platform/services/pool/service"
)

// consumerEnv is a database and a JetStream server with the streams, where a test runs pool
// consumers by hand, each on its own NATS connection, to crash them.
type consumerEnv struct {
	db      *pgxpool.Pool
	natsURL string
	js      jetstream.JetStream
	spec    bus.ConsumerSpec
}

func newConsumerEnv(t testing.TB, ackWait time.Duration) *consumerEnv {
	t.Helper()
	o := service.Options(service.Config{})
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: o.Migrations})
	e := &consumerEnv{db: testkit.NewPool(t, dsn, o.Schema), natsURL: testkit.NATS(t)}
	companiesTable(t, e.db)
	nc := connect(t, e.natsURL)
	t.Cleanup(nc.Close)
	var err error
	if e.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := bus.Provision(ctx, e.js, bus.ProvisionOptions{}); err != nil {
		t.Fatal(err)
	}
	e.spec = service.Consumers(service.Config{AckWait: ackWait, MaxAckPending: 4096})[1]
	if _, err := bus.EnsurePullConsumer(ctx, e.js, e.spec); err != nil {
		t.Fatal(err)
	}
	return e
}

func connect(t testing.TB, url string) *nats.Conn {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// start runs one consumer instance on a connection of its own until ctx ends; stop it by
// cancelling ctx, and close the returned connection to cut it off the server.
func (e *consumerEnv) start(t testing.TB, ctx context.Context, batch int, afterCommit func(context.Context)) (*nats.Conn, <-chan struct{}) {
	t.Helper()
	nc := connect(t, e.natsURL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := js.Consumer(ctx, e.spec.Stream, e.spec.Durable)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := bus.NewDeadLetterer(js, nil)
	if err != nil {
		t.Fatal(err)
	}
	consumer, err := ports.NewConsumer(adapters.NewRepository(e.db), c, e.spec.Durable, ports.ConsumerOptions{
		BatchSize: batch, MaxWait: 200 * time.Millisecond, DeadLetter: dl.SendJetStream, AfterCommit: afterCommit,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer nc.Close()
		_ = consumer.Run(ctx)
	}()
	return nc, done
}

// Exactly once under crashes: one consumer dies after committing a batch and before
// acknowledging it (its acknowledgements never reach the server), a second is killed at an
// arbitrary moment mid-batch; a third takes over. Every payment is debited exactly once and
// the chain is exact.
func TestCrashedPoolConsumersLeaveEveryPaymentDebitedExactlyOnce(t *testing.T) {
	e := newConsumerEnv(t, 2*time.Second)
	id := newPoolID(t, e.db, "test")
	const payments = 2000
	publishPayments(t, e.js, id, payments, 200)

	// Instance 1: crash right after its first commit, before any ack.
	ctx1, kill1 := context.WithCancel(context.Background())
	var once sync.Once
	var nc1 *nats.Conn
	var ready = make(chan struct{})
	nc1, done1 := e.start(t, ctx1, 300, func(context.Context) {
		once.Do(func() {
			<-ready
			nc1.Close()
			kill1()
		})
	})
	close(ready)
	<-done1
	committed := countMovements(t, e.db, id)
	if committed == 0 {
		t.Fatal("instance 1 committed nothing before its crash")
	}

	// Instance 2: killed at an arbitrary moment, while batches are in flight.
	ctx2, kill2 := context.WithCancel(context.Background())
	nc2, done2 := e.start(t, ctx2, 300, nil)
	time.Sleep(30 * time.Millisecond) // the arbitrary moment of the crash
	kill2()
	nc2.Close()
	<-done2

	// Instance 3 takes over, and gets the unacknowledged messages back after AckWait.
	ctx3, stop3 := context.WithCancel(context.Background())
	_, done3 := e.start(t, ctx3, 300, nil)
	defer func() { stop3(); <-done3 }()
	ms := waitMovements(t, e.db, id, payments)
	checkChain(t, e.db, id, ms)
	seen := map[string]bool{}
	for _, m := range ms {
		if m.Type != string(domain.Debit) || m.Payment == nil || seen[m.Payment.PaymentID] {
			t.Fatalf("movement %+v: not a first debit of its payment", m)
		}
		seen[m.Payment.PaymentID] = true
	}
	if n := count(storeTypes(t, e.db, id), events.TypePoolDebited); n != payments {
		t.Fatalf("%d debited events, want %d", n, payments)
	}
	t.Logf("instance 1 committed %d movements before crashing", committed)
}

// publishPayments publishes n payment.confirmed for pool id, then repeats extra of them as new
// events (same payment ids).
func publishPayments(t testing.TB, js jetstream.JetStream, id domain.ID, n, repeats int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var futures []jetstream.PubAckFuture
	for i := 0; i < n+repeats; i++ {
		f, err := js.PublishMsgAsync(svctest.EventMsg(t, paymentFact(id, fmt.Sprintf("pay-%d", i%n), "1.25")))
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal("publishing timed out")
		}
	}
}

func countMovements(t testing.TB, db *pgxpool.Pool, id domain.ID) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM movements WHERE company_id = $1 AND environment = $2`,
		id.CompanyID, id.Environment).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
