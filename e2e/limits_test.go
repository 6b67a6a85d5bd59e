package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/natsauth"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// Issue 41's reproduction: a partner's test key simulated three payments of
// 9223372036854.775807 USDC, each answered 201 CONFIRMED, after which the shared merchant ledger
// consumer retried the overflow for ever and no company's ledger moved. Each amount above the
// maximum of one operation is now a 400 naming the field, on every route that takes an amount,
// and the largest accepted amount still works.
func TestRegressionAnAmountThatOverflowsABalanceIsRefusedAtTheAPI(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	merchantID, _ := s.createMerchant(key, "Corner Shop")
	for _, c := range []struct {
		method, path, field string
		body                map[string]any
	}{
		{http.MethodPost, "/api/v1/dashboard/payments/simulate", "amount", map[string]any{"merchant_id": merchantID, "amount": "9223372036854.775807"}},
		{http.MethodPost, "/api/v1/dashboard/payments/simulate", "amount", map[string]any{"merchant_id": merchantID, "amount": "5000000000000"}},
		{http.MethodPost, "/api/v1/dashboard/payments/simulate", "amount", map[string]any{"merchant_id": merchantID, "amount": "1000000000.000001"}},
		{http.MethodPost, "/api/v1/payments/process", "amount", map[string]any{"merchant_id": merchantID, "amount": "1000000001"}},
		{http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", "amount", map[string]any{"amount": "9223372036854.775807"}},
		{http.MethodPatch, "/api/v1/dashboard/pool/settings", "low_threshold", map[string]any{"low_threshold": "1000000000.01"}},
	} {
		for range 3 {
			r := s.call(c.method, c.path, key, c.body)
			e, _ := r.body["error"].(map[string]any)
			if r.status != http.StatusBadRequest || r.errorCode() != "VALIDATION_ERROR" || e["field"] != c.field ||
				!strings.Contains(fmt.Sprint(e["message"]), "1000000000.00") {
				t.Fatalf("%s %s %v: %s", c.method, c.path, c.body, r)
			}
		}
	}
	// The maximum itself is accepted.
	s.must(s.call(http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", key, map[string]any{"amount": "1000000000.00"}), http.StatusCreated)
	r := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", key,
		map[string]any{"merchant_id": merchantID, "amount": "1000000000"}), http.StatusCreated)
	if p := r.body["payment"].(map[string]any); p["status"] != "CONFIRMED" || p["amount"] != "1000000000.00" {
		t.Fatalf("the largest payment: %s", r)
	}
	eventually(t, func() error {
		if l := s.ledger(key, merchantID); len(l) != 1 || l[0]["balance_after"] != "1000000000.00" {
			return fmt.Errorf("ledger %v", l)
		}
		return nil
	})
}

// The same amounts published on the bus by the payments publisher are outside the contract:
// every consumer dead-letters them with the reason, and another company's payments flow.
func TestRegressionAnOverflowingPaymentOnTheBusIsDeadLetteredWhileOtherCompaniesFlow(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	merchantID, wallet := s.createMerchant(key, "Corner Shop")
	other := s.newCompany("Other Company")
	otherMerchant, _ := s.createMerchant(other.keys["sk_test"], "Other Shop")

	pub := s.connectAs(natsauth.PaymentsPublisher)
	js, err := jetstream.New(pub)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev := &paymentv1.PaymentConfirmed{Meta: meta(s.creds.Company.ID, "test"), PaymentId: fmt.Sprintf("pay-huge-%d", i),
			MerchantId: merchantID, MerchantWallet: wallet, CustomerWallet: "0x" + strings.Repeat("1", 40),
			Amount: "9223372036854.775807", TxHash: txHash(), Status: "CONFIRMED", ConfirmedAt: time.Now().UTC().Format(time.RFC3339)}
		m, err := eventMsg(ev, ev.Meta.EventId)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(context.Background(), m); err != nil {
			t.Fatalf("publishing as the payments publisher: %v", err)
		}
	}
	r := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", other.keys["sk_test"],
		map[string]any{"merchant_id": otherMerchant, "amount": "2.00"}), http.StatusCreated)
	paymentID := r.body["payment"].(map[string]any)["payment_id"]
	eventually(t, func() error {
		l := s.ledger(other.keys["sk_test"], otherMerchant)
		if len(l) != 1 || l[0]["payment_id"] != paymentID {
			return fmt.Errorf("the other company's ledger: %v", l)
		}
		r := s.call(http.MethodGet, "/api/v1/management/pool/transactions?type=DEBIT", other.keys["sk_test"], nil)
		if txs, _ := r.body["transactions"].([]any); len(txs) != 1 {
			return fmt.Errorf("the other company's pool debits: %s", r)
		}
		return nil
	})
	// Each consumer of payment.confirmed set the three aside with the reason.
	for _, consumer := range []string{"merchant-ledger-payments", "pool-payments", "payment-projection"} {
		eventually(t, func() error {
			dls := s.deadLetters(consumer)
			if len(dls) != 3 {
				return fmt.Errorf("%s: %d dead letters", consumer, len(dls))
			}
			for _, dl := range dls {
				if !strings.Contains(dl.Reason, "above the maximum amount of 1000000000.00") || dl.ReasonKind != "invalid" {
					return fmt.Errorf("%s: dead letter %+v", consumer, dl)
				}
			}
			return nil
		})
	}
	// Nothing of them reached the partner's reads.
	if l := s.ledger(key, merchantID); len(l) != 0 {
		t.Errorf("ledger of the overflowing merchant: %v", l)
	}
	if r := s.must(s.call(http.MethodGet, "/api/v1/management/payments", key, nil), http.StatusOK); len(r.body["payments"].([]any)) != 0 {
		t.Errorf("payments of the overflowing company: %s", r)
	}
}

// A payment that would take its merchant past the balance limit is refused at admission with
// a 400 naming the amount: the ledger would refuse its confirmation, and the partner learns it
// at once instead of an operator finding it set aside.
func TestAPaymentThatWouldPassTheMerchantsBalanceLimitIsRefusedAtAdmission(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	merchantID, wallet := s.createMerchant(key, "Corner Shop")
	deposits := int(money.MaxBalance.Micros() / money.MaxAmount.Micros())
	for range deposits {
		s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: meta(s.creds.Company.ID, "test"),
			MerchantId: merchantID, WalletAddress: wallet, Amount: money.MaxAmount.String(), TxHash: txHash(),
			DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	}
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/merchants/"+merchantID+"/transactions?limit=1", key, nil)
		txs, _ := r.body["transactions"].([]any)
		if len(txs) != 1 || txs[0].(map[string]any)["balance_after"] != money.MaxBalance.String() {
			return fmt.Errorf("ledger: %s", r)
		}
		return nil
	})
	r := s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", key, map[string]any{"merchant_id": merchantID, "amount": "0.01"})
	e, _ := r.body["error"].(map[string]any)
	if r.status != http.StatusBadRequest || e["field"] != "amount" || !strings.Contains(fmt.Sprint(e["message"]), "merchant's balance") {
		t.Fatalf("a payment past the limit: %s", r)
	}
	if r := s.must(s.call(http.MethodGet, "/api/v1/management/payments", key, nil), http.StatusOK); len(r.body["payments"].([]any)) != 0 {
		t.Fatalf("a refused payment was published: %s", r)
	}
}
