package ports_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
	paymentservice "github.com/payplat/platform/services/payment-projection/service"
	poolmigrations "github.com/payplat/platform/services/pool/migrations"
)

// paymentStack is the real gateway (service.New, on a loopback port) and the real
// payment-projection service (svctest) on one database and one NATS JetStream server. The
// database also holds the merchant service's read tables, where tests put merchants.
type paymentStack struct {
	stack
	db      *pgxpool.Pool
	dsn     string
	natsURL string
}

func newPaymentStack(t *testing.T) *paymentStack {
	t.Helper()
	s := newPaymentGateway(t)
	s.startProjection()
	return s
}

// newPayingCompany is newPaymentStack with a company called name and its ACTIVE test merchant
// called shop, whose id it returns: the start of most payment tests.
func newPayingCompany(t *testing.T, name, shop string) (*paymentStack, company, string) {
	t.Helper()
	s := newPaymentStack(t)
	c := s.createCompany(name)
	return s, c, s.payMerchant(c, "test", shop, "ACTIVE")
}

// startProjection starts a replica of the payment-projection service with as many workers as
// production runs (each takes a batch off the consumer: one payment's events may be applied by
// different workers, in any order).
func (s *paymentStack) startProjection() {
	s.t.Helper()
	svctest.StartOn(s.t, paymentservice.Options(paymentservice.Config{ExpiryInterval: time.Hour, BatchSize: 100, Workers: 3}),
		s.dsn, s.natsURL)
}

// newPaymentGateway is the stack without the payment-projection running.
func newPaymentGateway(t *testing.T) *paymentStack {
	t.Helper()
	return newPaymentGatewayOn(t, testkit.NewDatabase(t, paymentSchemas()...), testkit.NATS(t))
}

// paymentSchemas are the schemas of the payment stack's database (the pool's too: a payment's
// admission reads its pool's balance).
func paymentSchemas() []migrate.Set {
	return []migrate.Set{migrations.Set(), merchantmigrations.Set(), paymentmigrations.Set(), poolmigrations.Set()}
}

// newPaymentGatewayOn is newPaymentGateway on a database (of paymentSchemas) and a NATS server of
// the test's choosing, the gateway's environment extended by env (name, value, ...).
func newPaymentGatewayOn(t *testing.T, dsn, natsURL string, env ...string) *paymentStack {
	t.Helper()
	return &paymentStack{stack: runGateway(t, dsn, natsURL, env...), db: testkit.NewPool(t, dsn, "public"), dsn: dsn,
		natsURL: natsURL}
}

// payMerchant inserts a merchant into the merchant service's read table, as the merchant
// service would after creating it.
func (s *paymentStack) payMerchant(c company, env, name, status string) string {
	s.t.Helper()
	id := uuid.NewString()
	_, err := s.db.Exec(context.Background(), `INSERT INTO merchant.merchants (id, company_id, environment, name,
        email, wallet_address, wallet_user_id, status, version, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, now(), now())`, id, c.ID, env, name,
		strings.ToLower(strings.ReplaceAll(name, " ", "."))+"@example.com",
		"0x"+strings.Repeat("ab", 20), uuid.NewString(), status)
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

// payStreamCount returns how many messages the PAYMENTS stream holds.
func (s *paymentStack) payStreamCount() uint64 {
	s.t.Helper()
	st, err := s.js.Stream(context.Background(), "PAYMENTS")
	if err != nil {
		s.t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return info.State.Msgs
}

// payList is a decoded GET /payments answer.
type payList struct {
	Payments []struct {
		PaymentID string `json:"payment_id"`
		Status    string `json:"status"`
		Amount    string `json:"amount"`
		Currency  string `json:"currency"`
		Merchant  struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"merchant"`
		TxHash      *string `json:"tx_hash"`
		CreatedAt   string  `json:"created_at"`
		ExpiresAt   *string `json:"expires_at"`
		ConfirmedAt *string `json:"confirmed_at"`
	} `json:"payments"`
	Pagination struct {
		Limit   int  `json:"limit"`
		HasMore bool `json:"has_more"`
	} `json:"pagination"`
}

// natsConn returns the test's NATS connection.
func (s *paymentStack) natsConn() *nats.Conn { return s.js.Conn() }
