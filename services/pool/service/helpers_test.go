package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/service"
)

// harness is the real pool service on a fresh database and JetStream server.
type harness struct {
	t  *testing.T
	s  *svctest.Started
	js jetstream.JetStream
	nc *nats.Conn
}

func newHarness(t *testing.T, tuning service.Config) *harness {
	t.Helper()
	s := svctest.Start(t, service.Options(tuning))
	companiesTable(t, s.DB)
	return harnessOn(t, s)
}

// companiesTable creates the gateway's table of companies, as a deployment where both share the
// database has it: the pool's consumers hold every fact while it is not visible (issue 16).
func companiesTable(t testing.TB, db *pgxpool.Pool) {
	t.Helper()
	if _, err := db.Exec(context.Background(), `CREATE SCHEMA IF NOT EXISTS gateway;
        CREATE TABLE IF NOT EXISTS gateway.companies (id uuid PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
}

func harnessOn(t *testing.T, s *svctest.Started) *harness {
	nc, js := testkit.JetStream(t, s.NATSURL)
	return &harness{t: t, s: s, js: js, nc: nc}
}

func (h *harness) db() *pgxpool.Pool { return h.s.DB }

// publish publishes an event the way an internal team does: protobuf, Nats-Msg-Id = event id.
func publish(t testing.TB, js jetstream.JetStream, msg proto.Message) {
	t.Helper()
	svctest.Publish(t, js, svctest.EventMsg(t, msg))
}

// publishAs publishes msg with another Nats-Msg-Id: the same event reaching the stream twice
// (a publisher retry past the duplicate window).
func publishAs(t testing.TB, js jetstream.JetStream, msg proto.Message, msgID string) {
	t.Helper()
	m := svctest.EventMsg(t, msg)
	m.Header.Set(nats.MsgIdHdr, msgID)
	svctest.Publish(t, js, m)
}

func meta(id domain.ID) *commonv1.EventMeta {
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: id.CompanyID,
		Environment: id.Environment}
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func depositFact(id domain.ID, txHash, amount string) *treasuryv1.TreasuryDepositDetected {
	return &treasuryv1.TreasuryDepositDetected{Meta: meta(id), TxHash: txHash, Amount: amount,
		FromAddress: "0xfrom", DetectedAt: now()}
}

func withdrawalFact(id domain.ID, withdrawalID, amount string) *treasuryv1.TreasuryWithdrawalCompleted {
	return &treasuryv1.TreasuryWithdrawalCompleted{Meta: meta(id), WithdrawalId: withdrawalID, Amount: amount,
		ToAddress: "0xbank", TxHash: "0xw" + withdrawalID, CompletedAt: now()}
}

func refundFact(id domain.ID, paymentID, amount string) *treasuryv1.TreasuryRefundCompleted {
	return &treasuryv1.TreasuryRefundCompleted{Meta: meta(id), PaymentId: paymentID, MerchantId: "m-1",
		Amount: amount, TxHash: "0xr" + paymentID, CompletedAt: now()}
}

func paymentFact(id domain.ID, paymentID, amount string) *paymentv1.PaymentConfirmed {
	return &paymentv1.PaymentConfirmed{Meta: meta(id), PaymentId: paymentID, MerchantId: "m-1",
		MerchantWallet: "0xmerchant", CustomerWallet: "0xcustomer", Amount: amount, TxHash: "0xp" + paymentID,
		Status: "CONFIRMED", ConfirmedAt: now()}
}

// recordFacts records facts on the pool of id in one transaction, as the consumer does: the
// pool's stream lock first, then the facts.
func recordFacts(t testing.TB, db *pgxpool.Pool, repo *adapters.Repository, id domain.ID, facts []domain.Fact) {
	t.Helper()
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := repo.LockPools(ctx, tx, id); err != nil {
			return err
		}
		_, err := repo.RecordFacts(ctx, tx, id, facts)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// newPoolID returns the pool in env of a new company, registered in gateway.companies (see
// companiesTable).
func newPoolID(t testing.TB, db *pgxpool.Pool, env string) domain.ID {
	t.Helper()
	id := strangerPoolID(t, env)
	if _, err := db.Exec(context.Background(), `INSERT INTO gateway.companies VALUES ($1)`, id.CompanyID); err != nil {
		t.Fatal(err)
	}
	return id
}

// strangerPoolID returns the pool in env of a company that does not exist.
func strangerPoolID(t testing.TB, env string) domain.ID {
	t.Helper()
	id, err := domain.NewID(uuid.NewString(), env)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitMovements waits until the pool has n movements and returns them, oldest first.
func waitMovements(t testing.TB, db *pgxpool.Pool, id domain.ID, n int) []adapters.TransactionView {
	t.Helper()
	var got []adapters.TransactionView
	testkit.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		var err error
		if got, err = adapters.Transactions(context.Background(), db, id); err != nil {
			return err
		}
		if len(got) != n {
			return fmt.Errorf("%d movements, want %d", len(got), n)
		}
		return nil
	})
	return got
}

// checkChain checks the balance chain of a pool: each movement's balance_after is
// balance_before + amount, each starts where the previous ended, the first starts at 0, and
// the balance row equals the sum of the amounts.
func checkChain(t testing.TB, db *pgxpool.Pool, id domain.ID, ms []adapters.TransactionView) money.Amount {
	t.Helper()
	var sum money.Amount
	for i, m := range ms {
		after, err := m.BalanceBefore.Add(m.Amount)
		if err != nil || after != m.BalanceAfter {
			t.Fatalf("movement %d: %s + %s != %s", i, m.BalanceBefore, m.Amount, m.BalanceAfter)
		}
		if m.BalanceBefore != sum {
			t.Fatalf("movement %d starts at %s, previous ended at %s", i, m.BalanceBefore, sum)
		}
		if m.Seq != int64(i+1) {
			t.Fatalf("movement %d has seq %d", i, m.Seq)
		}
		sum = m.BalanceAfter
	}
	b, err := adapters.Balance(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Balance != sum {
		t.Fatalf("balance %s, sum of movements %s", b.Balance, sum)
	}
	return sum
}

// storeTypes returns the event types of the pool's stream in the event store.
func storeTypes(t testing.TB, db *pgxpool.Pool, id domain.ID) []string {
	t.Helper()
	recs, err := eventstore.New(db).ReadStream(context.Background(), db, id.StreamID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Type
	}
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
