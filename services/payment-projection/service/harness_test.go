package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"

	"github.com/payplat/platform/services/payment-projection/migrations"
	"github.com/payplat/platform/services/payment-projection/service"
)

// env is a database and a NATS server with the bus provisioned.
type env struct {
	t   testing.TB
	dsn string
	url string
	db  *pgxpool.Pool
	nc  *nats.Conn
	js  jetstream.JetStream
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, testkit.NATS(t))
}

// newEnvOn is newEnv with the NATS server at url.
func newEnvOn(t testing.TB, url string) *env {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrations.Set())
	e := &env{t: t, dsn: dsn, url: url}
	e.db = testkit.NewPool(t, dsn, migrations.Schema)
	e.nc, e.js = testkit.JetStream(t, e.url)
	if err := bus.Provision(context.Background(), e.js, bus.ProvisionOptions{Replicas: 1, DuplicateWindow: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	return e
}

// start runs one replica of the service on the environment.
func (e *env) start(cfg service.Config) *svctest.Started {
	e.t.Helper()
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 500
	}
	if cfg.ExpiryInterval == 0 {
		cfg.ExpiryInterval = time.Hour
	}
	return svctest.StartOn(e.t, service.Options(cfg), e.dsn, e.url)
}

// publishRaw publishes an event without Nats-Msg-Id, so that JetStream stores every copy (to
// prove that the projection, not the stream, de-duplicates).
func (e *env) publishRaw(msg proto.Message) {
	e.t.Helper()
	m := svctest.EventMsg(e.t, msg)
	m.Header.Del(nats.MsgIdHdr)
	svctest.Publish(e.t, e.js, m)
}

// waitApplied waits until the projection has applied n distinct events.
func (e *env) waitApplied(n int) {
	e.t.Helper()
	e.waitAppliedTo(func() int { return n })
}

// waitAppliedTo is waitApplied for a count that may grow while it waits: want is asked again at
// each look.
func (e *env) waitAppliedTo(want func() int) {
	e.t.Helper()
	testkit.WaitFor(e.t, 60*time.Second, 20*time.Millisecond, func() error {
		var got int
		if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM projection_applied`).Scan(&got); err != nil {
			return err
		}
		if n := want(); got != n {
			return fmt.Errorf("%d of %d events applied", got, n)
		}
		return nil
	})
}

// table returns the payments table as comparable rows (without bookkeeping columns).
func (e *env) table() []string {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `SELECT concat_ws('|', company_id, environment, payment_id, status,
        public_status, has_created, merchant_id, merchant_wallet, customer_wallet, amount_micros, currency, tx_hash,
        block_explorer_url, error_message, created_at, expires_at, confirmed_at, expired_at)
        FROM payments ORDER BY company_id, environment, payment_id`)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// lifecycle builds payment events for one payment.
type lifecycle struct {
	company, env, payment, merchant string
	amount                          string // "12.50" unless set
	base                            time.Time
	expires                         time.Time
	seq                             int
}

func newLifecycle(company string, base time.Time) *lifecycle {
	return &lifecycle{company: company, env: "test", payment: uuid.NewString(), merchant: uuid.NewString(),
		amount: "12.50", base: base, expires: base.Add(time.Hour)}
}

func (l *lifecycle) meta() *commonv1.EventMeta {
	l.seq++
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.New(l.base.Add(time.Duration(l.seq) * time.Second)),
		CompanyId: l.company, Environment: l.env}
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

const (
	wallet   = "0x1111111111111111111111111111111111111111"
	customer = "0x2222222222222222222222222222222222222222"
)

func (l *lifecycle) txHash() string {
	return "0x" + fmt.Sprintf("%064x", uuid.MustParse(l.payment).ID())
}

func (l *lifecycle) created() proto.Message {
	return &paymentv1.PaymentCreated{Meta: l.meta(), PaymentId: l.payment, MerchantId: l.merchant, MerchantWallet: wallet,
		Amount: l.amount, Status: "PENDING", ExpiresAt: rfc(l.expires), CreatedAt: rfc(l.base)}
}

func (l *lifecycle) processing() proto.Message {
	return &paymentv1.PaymentProcessing{Meta: l.meta(), PaymentId: l.payment, MerchantId: l.merchant,
		MerchantWallet: wallet, CustomerWallet: customer, Amount: l.amount, TxHash: l.txHash(), Status: "PROCESSING"}
}

func (l *lifecycle) confirmed() proto.Message {
	return &paymentv1.PaymentConfirmed{Meta: l.meta(), PaymentId: l.payment, MerchantId: l.merchant,
		MerchantWallet: wallet, CustomerWallet: customer, Amount: l.amount, TxHash: l.txHash(),
		BlockExplorerUrl: "https://basescan.org/tx/" + l.txHash(), Status: "CONFIRMED", ConfirmedAt: rfc(l.base.Add(time.Minute))}
}

func (l *lifecycle) failed() proto.Message {
	return &paymentv1.PaymentFailed{Meta: l.meta(), PaymentId: l.payment, MerchantId: l.merchant, Amount: l.amount,
		TxHash: l.txHash(), Status: "FAILED", ErrorMessage: "execution reverted"}
}

func (l *lifecycle) expired() proto.Message {
	return &paymentv1.PaymentExpired{Meta: l.meta(), PaymentId: l.payment, MerchantId: l.merchant, Amount: l.amount,
		Status: "EXPIRED", ExpiredAt: rfc(l.expires)}
}

func serviceConfig(batch int) service.Config {
	return service.Config{BatchSize: batch, ExpiryInterval: time.Hour, Workers: 3}
}
