package e2e_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/api/client"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
)

func (s *stack) createMerchant(key, name string) (id, wallet string) {
	s.t.Helper()
	r, err := s.partner(key).CreateMerchantWithResponse(bg, nil, client.CreateMerchantJSONRequestBody{
		Name: name, Email: fmt.Sprintf("%d@example.com", time.Now().UnixNano())}, idempotent())
	ok(s.t, r, err)
	return r.JSON201.Merchant.Id, r.JSON201.Merchant.WalletAddress
}

// A treasury deposit published by the chain watcher funds the pool; a simulated payment then
// goes created → processing → confirmed: the payments list shows it CONFIRMED with its tx hash,
// the pool records the DEBIT with the payment reference, the merchant ledger the PAYMENT credit,
// the balances agree, the pool crosses its low-balance threshold once, and the partner's
// endpoint receives every event signed, the payment's in order.
func TestSimulatedPaymentMovesMoneyEverywhere(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rcv := newReceiver(t)
	key := s.creds.Keys.SKTest
	s.configureWebhooks(key, rcv)
	merchantID, _ := s.createMerchant(key, "Corner Shop")

	s.publish(&treasuryv1.TreasuryDepositDetected{Meta: meta(s.creds.Company.ID, "test"),
		Amount: "100", TxHash: "0x" + fmt.Sprintf("%064x", time.Now().UnixNano()), FromAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/pool/balance", key, nil)
		if r.status != http.StatusOK || r.body["balance"] != "100.00" {
			return fmt.Errorf("pool balance: %s", r)
		}
		return nil
	})

	r := s.must(s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", key,
		map[string]any{"merchant_id": merchantID, "amount": "12.5"}), http.StatusCreated)
	paymentID, _ := r.body["payment"].(map[string]any)["payment_id"].(string)
	if paymentID == "" {
		t.Fatalf("simulate: %s", r)
	}
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/payments?status=CONFIRMED", key, nil)
		ps, _ := r.body["payments"].([]any)
		if len(ps) != 1 {
			return fmt.Errorf("payments: %s", r)
		}
		p := ps[0].(map[string]any)
		merchant, _ := p["merchant"].(map[string]any)
		if p["payment_id"] != paymentID || p["amount"] != "12.50" || p["tx_hash"] == nil || p["confirmed_at"] == nil ||
			p["currency"] != "USDC" || merchant["id"] != merchantID || merchant["name"] != "Corner Shop" {
			return fmt.Errorf("payment: %v", p)
		}
		return nil
	})
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/pool/transactions?type=DEBIT", key, nil)
		txs, _ := r.body["transactions"].([]any)
		if len(txs) != 1 {
			return fmt.Errorf("pool debits: %s", r)
		}
		d := txs[0].(map[string]any)
		ref, _ := d["payment"].(map[string]any)
		if d["amount"] != "-12.50" || d["balance_before"] != "100.00" || d["balance_after"] != "87.50" ||
			ref["payment_id"] != paymentID || ref["amount"] != "12.50" || ref["merchant_name"] != "Corner Shop" {
			return fmt.Errorf("pool debit: %v", d)
		}
		return nil
	})
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/merchants/"+merchantID+"/transactions", key, nil)
		txs, _ := r.body["transactions"].([]any)
		if len(txs) != 1 {
			return fmt.Errorf("ledger: %s", r)
		}
		e := txs[0].(map[string]any)
		if e["type"] != "PAYMENT" || e["amount"] != "12.50" || e["balance_after"] != "12.50" || e["payment_id"] != paymentID ||
			e["status"] != "COMPLETED" {
			return fmt.Errorf("ledger entry: %v", e)
		}
		return nil
	})
	balance := s.must(s.call(http.MethodGet, "/api/v1/management/pool/balance", key, nil), http.StatusOK)
	if balance.body["balance"] != "87.50" || balance.body["currency"] != "USDC" {
		t.Errorf("pool balance: %s", balance)
	}

	// The debit takes the pool from 100.00 (the default threshold) to 87.50: one low-balance
	// alert.
	want := []string{"pool.deposit_received", "payment.created", "payment.processing", "payment.confirmed", "pool.low_balance"}
	eventually(t, func() error {
		for _, ev := range want {
			if len(rcv.deliveries(ev)) != 1 {
				return fmt.Errorf("%d deliveries of %s", len(rcv.deliveries(ev)), ev)
			}
		}
		return nil
	})
	rcv.mu.Lock()
	var order []string
	for _, d := range rcv.got {
		if !d.valid {
			t.Errorf("%s delivered with a bad signature", d.event)
		}
		if strings.HasPrefix(d.event, "payment.") {
			order = append(order, d.event)
		}
	}
	rcv.mu.Unlock()
	if fmt.Sprint(order) != fmt.Sprint(want[1:4]) {
		t.Errorf("payment events arrived in the order %v", order)
	}
	confirmed := rcv.deliveries("payment.confirmed")[0].body["data"].(map[string]any)
	var fields []string
	for k := range confirmed {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	if fmt.Sprint(fields) != "[amount block_explorer_url confirmed_at customer_wallet merchant_id merchant_wallet payment_id status tx_hash]" {
		t.Errorf("payment.confirmed data fields %v", fields)
	}
}

// The SDK process call refuses a paused merchant (403, nothing published) and creates a
// payment for an active one that the list shows at once.
func TestProcessPaymentChecksTheMerchant(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	merchantID, _ := s.createMerchant(key, "Kiosk")
	s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+merchantID+"/status", key, map[string]any{"status": "PAUSED"}), http.StatusOK)
	if r := s.call(http.MethodPost, "/api/v1/payments/process", s.creds.Keys.PKTest,
		map[string]any{"merchant_id": merchantID, "amount": "5.00"}); r.status != http.StatusForbidden || r.errorCode() != "MERCHANT_NOT_ACTIVE" {
		t.Fatalf("process for a paused merchant: %s", r)
	}
	s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+merchantID+"/status", key, map[string]any{"status": "ACTIVE"}), http.StatusOK)
	r := s.must(s.call(http.MethodPost, "/api/v1/payments/process", s.creds.Keys.PKTest,
		map[string]any{"merchant_id": merchantID, "amount": "5.00"}), http.StatusCreated)
	id := r.body["payment"].(map[string]any)["payment_id"]
	list := s.must(s.call(http.MethodGet, "/api/v1/management/payments", key, nil), http.StatusOK)
	ps, _ := list.body["payments"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["payment_id"] != id || ps[0].(map[string]any)["status"] != "PENDING" {
		t.Errorf("payments right after the 201: %s", list)
	}
	if r := s.call(http.MethodPost, "/api/v1/dashboard/payments/simulate", s.creds.Keys.SKLive,
		map[string]any{"merchant_id": merchantID, "amount": "5.00"}); r.status != http.StatusForbidden || r.errorCode() != "TEST_MODE_ONLY" {
		t.Errorf("simulate with a live key: %s", r)
	}
}
