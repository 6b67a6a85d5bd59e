package service_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/migrations"
	"github.com/payplat/platform/services/merchant/ports"
)

func init() { testkit.RegisterHelper("ledger-killed-after-commit", ledgerKilledAfterCommit) }

// ledgerKilledAfterCommit runs the ledger's payments runner, as the merchant service does, on
// the database and NATS server its environment names, and kills itself (SIGKILL) on its first
// acknowledgement: after its first batch is committed, before any of it is acknowledged.
func ledgerKilledAfterCommit() int {
	return svctest.ConsumerProcess{DSN: os.Getenv("LEDGER_DSN"), Schema: migrations.Schema,
		NATSURL: os.Getenv("LEDGER_NATS"), Consumer: ports.PaymentsConsumer, BatchSize: 500,
		Wrap: testkit.KillOnFirstAck,
		Projector: func(db *pgxpool.Pool) projection.Projector {
			return ports.NewLedgerProjector(ports.PaymentsConsumer.Durable, adapters.NewRepository(db, eventstore.New(db)))
		}}.Run()
}

// The merchant ledger's consumer process is killed with SIGKILL after committing a batch of
// payment credits and before acknowledging any of them. JetStream delivers the batch again to
// the restarted service, which must record nothing twice: one PAYMENT per payment, balances
// chained.
func TestLedgerKilledAfterCommitBeforeAckRecordsEachPaymentOnce(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	if err := s.svc.Stop(); err != nil { // the helper is the only consumer of the batch
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		s.publish(confirmed(m, fmt.Sprintf("pay-%d", i), "1.25"), "")
	}
	helper := testkit.StartHelper(t, "ledger-killed-after-commit", "LEDGER_DSN="+s.dsn, "LEDGER_NATS="+s.natsURL)
	testkit.WaitKilled(t, helper, time.Minute)
	if got := len(s.ledger(m.ID)); got == 0 {
		t.Fatal("the killed consumer committed nothing: it was killed before its commit, not after")
	}
	s.start()
	// The batch comes back after the consumer's AckWait (bus.DefaultPullAckWait).
	testkit.WaitFor(t, time.Minute, 50*time.Millisecond, s.consumersDrained)
	got := s.ledger(m.ID)
	seen := map[string]bool{}
	for i, e := range got {
		if e.typ != "PAYMENT" || seen[e.paymentID] {
			t.Fatalf("entry %d: %+v (a payment recorded twice)", i, e)
		}
		seen[e.paymentID] = true
		if i > 0 && e.before != got[i-1].after {
			t.Fatalf("entry %d: balance_before %s, previous balance_after %s", i, e.before, got[i-1].after)
		}
	}
	if len(got) != n {
		t.Fatalf("%d entries, want %d", len(got), n)
	}
	if s.count(`SELECT balance_micros FROM merchants WHERE id = $1`, m.ID) != n*1_250_000 {
		t.Fatal("merchant balance is not the sum of the payments")
	}
}
