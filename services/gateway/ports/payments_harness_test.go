package ports_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
	paymentservice "github.com/payplat/platform/services/payment-projection/service"
)

// paymentStack is the real gateway (service.New, on a loopback port) and the real
// payment-projection service (svctest) on one database and one NATS JetStream server. The
// database also holds the merchant service's read tables, where tests put merchants.
type paymentStack struct {
	*gateway
	js      jetstream.JetStream
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
	dsn := testkit.NewDatabase(t, migrations.Set(), merchantmigrations.Set(), paymentmigrations.Set())
	natsURL := testkit.NATS(t)

	g, js := runGateway(t, dsn, natsURL)
	return &paymentStack{gateway: g, js: js, db: testkit.NewPool(t, dsn, "public"), dsn: dsn, natsURL: natsURL}
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
