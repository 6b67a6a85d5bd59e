package ports_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	merchantadapters "github.com/payplat/platform/services/merchant/adapters"
	merchantapp "github.com/payplat/platform/services/merchant/app"
	merchantservice "github.com/payplat/platform/services/merchant/service"
	poolservice "github.com/payplat/platform/services/pool/service"
)

// End to end with the real services: a simulated payment shows CONFIRMED in GET /payments when
// the 201 returns, and the pool's DEBIT and the merchant ledger's PAYMENT credit follow from
// payment.confirmed through their own consumers, with consistent balances.
func TestASimulatedPaymentIsConfirmedThenDebitsThePoolAndCreditsTheMerchant(t *testing.T) {
	t.Parallel()
	s := newPaymentStack(t)
	svctest.StartOn(t, merchantservice.Options(merchantservice.Config{
		Wallets: func(db *pgxpool.Pool) (merchantapp.WalletProvider, error) {
			return merchantadapters.NewHDWalletProvider(db, testWalletKeys(t))
		},
	}), s.dsn, s.natsURL)
	svctest.StartOn(t, poolservice.Options(poolservice.Config{}), s.dsn, s.natsURL)
	c := s.createCompany("Acme End To End")
	key := c.Keys["sk_test"]

	r := s.call(key, http.MethodPost, "/api/v1/management/merchants/create", `{"name":"E2E Shop","email":"e2e@example.com"}`)
	merchant := decodeJSON[struct{ Merchant struct{ ID string } }](t, r, http.StatusCreated).Merchant.ID
	if r := s.call(key, http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", `{"amount":"100.00"}`); r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("simulate deposit: %d %s", r.status, r.body)
	}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		return expectJSON(s.call(key, http.MethodGet, "/api/v1/management/pool/balance", ""), "balance", "100.00")
	})

	p := decodePayment(t, s.call(key, http.MethodPost, "/api/v1/dashboard/payments/simulate",
		fmt.Sprintf(`{"merchant_id":%q,"amount":"12.50"}`, merchant)), http.StatusCreated).Payment
	l := s.payments(key, "?status=CONFIRMED")
	if len(l.Payments) != 1 || l.Payments[0].PaymentID != p.PaymentID || l.Payments[0].TxHash == nil ||
		l.Payments[0].ConfirmedAt == nil || l.Payments[0].Merchant.Name != "E2E Shop" {
		t.Fatalf("payments after simulate: %s", mustJSON(l))
	}

	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var tx struct {
			Transactions []struct {
				Type    string `json:"type"`
				Amount  string `json:"amount"`
				Status  string `json:"status"`
				TxHash  string `json:"tx_hash"`
				Payment *struct {
					PaymentID string `json:"payment_id"`
				} `json:"payment"`
			} `json:"transactions"`
		}
		r := s.call(key, http.MethodGet, "/api/v1/management/pool/transactions", "")
		if err := json.Unmarshal(r.body, &tx); err != nil {
			return err
		}
		for _, e := range tx.Transactions {
			if e.Type == "DEBIT" && e.Payment != nil && e.Payment.PaymentID == p.PaymentID {
				if e.Amount != "-12.50" || e.Status != "CONFIRMED" || e.TxHash != *p.TxHash {
					return fmt.Errorf("pool debit %+v", e)
				}
				return nil
			}
		}
		return fmt.Errorf("no pool DEBIT for the payment yet: %s", r.body)
	})
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var ledger struct {
			Transactions []struct {
				Type      string  `json:"type"`
				Amount    string  `json:"amount"`
				Status    string  `json:"status"`
				PaymentID *string `json:"payment_id"`
			} `json:"transactions"`
		}
		r := s.call(key, http.MethodGet, "/api/v1/management/merchants/"+merchant+"/transactions", "")
		if err := json.Unmarshal(r.body, &ledger); err != nil {
			return err
		}
		for _, e := range ledger.Transactions {
			if e.Type == "PAYMENT" && e.PaymentID != nil && *e.PaymentID == p.PaymentID {
				if e.Amount != "12.50" || e.Status != "COMPLETED" {
					return fmt.Errorf("ledger credit %+v", e)
				}
				return nil
			}
		}
		return fmt.Errorf("no ledger PAYMENT for the payment yet: %s", r.body)
	})
	if err := expectJSON(s.call(key, http.MethodGet, "/api/v1/management/pool/balance", ""), "balance", "87.50"); err != nil {
		t.Fatal(err)
	}
	r = s.call(key, http.MethodGet, "/api/v1/management/merchants", "")
	var merchants struct {
		Merchants []struct{ ID, Balance string } `json:"merchants"`
	}
	if err := json.Unmarshal(r.body, &merchants); err != nil || len(merchants.Merchants) != 1 || merchants.Merchants[0].Balance != "12.50" {
		t.Fatalf("merchant balance: %s", r.body)
	}
}

// expectJSON checks that the response's JSON object (or its single wrapped object) has field =
// want.
func expectJSON(r response, field, want string) error {
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		return fmt.Errorf("%d %s", r.status, r.body)
	}
	if v, ok := m[field]; ok {
		if v != want {
			return fmt.Errorf("%s = %v, want %s", field, v, want)
		}
		return nil
	}
	for _, v := range m {
		if inner, ok := v.(map[string]any); ok && inner[field] != nil {
			if inner[field] != want {
				return fmt.Errorf("%s = %v, want %s", field, inner[field], want)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s in %s", field, r.body)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
