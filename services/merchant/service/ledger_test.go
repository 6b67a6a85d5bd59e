package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/svc/svctest"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/domain"
)

func confirmed(m api.Merchant, paymentID, amount string) *paymentv1.PaymentConfirmed {
	return &paymentv1.PaymentConfirmed{Meta: meta(m.CompanyID, m.Environment), PaymentId: paymentID,
		MerchantId: m.ID, MerchantWallet: m.WalletAddress, CustomerWallet: "0xcustomer", Amount: amount,
		TxHash: "0x" + paymentID, Status: "CONFIRMED", ConfirmedAt: "2026-11-23T10:00:00Z"}
}

type entry struct {
	typ, paymentID, txHash, status   string
	amount, before, after, sourceKey string
}

func (s *stack) ledger(merchantID string) []entry {
	s.t.Helper()
	rows, err := s.db.Query(context.Background(), `SELECT type, payment_id, tx_hash, status,
        (amount_micros::numeric / 1000000)::text, (balance_before_micros::numeric / 1000000)::text,
        (balance_after_micros::numeric / 1000000)::text, source_key
        FROM merchant_ledger WHERE merchant_id = $1 ORDER BY seq`, merchantID)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var out []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.typ, &e.paymentID, &e.txHash, &e.status, &e.amount, &e.before, &e.after,
			&e.sourceKey); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func (s *stack) waitEntries(merchantID string, n int) []entry {
	s.t.Helper()
	var got []entry
	waitFor(s.t, func() error {
		got = s.ledger(merchantID)
		if len(got) < n {
			return errorf("%d ledger entries, want %d", len(got), n)
		}
		return nil
	})
	return got
}

// The same payment.confirmed delivered five times (republished with new message ids, and a
// second event id for the same payment), and again after a restart of the consumer, is one
// PAYMENT entry. Deposits and withdrawals chain their balances; the merchant's balance is the
// last balance_after.
func TestLedgerRecordsARepeatedPaymentOnceAndChainsItsBalances(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	pay := confirmed(m, "pay-1", "12.50")
	for i := range 5 {
		s.publish(pay, uuid.NewString()) // same event id, a new Nats-Msg-Id: the stream keeps all five
		if i == 0 {
			again := confirmed(m, "pay-1", "12.50") // same payment, another event id
			s.publish(again, "")
		}
	}
	s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: meta("c1", "test"), MerchantId: m.ID,
		WalletAddress: m.WalletAddress, Amount: "100", TxHash: "0xdeposit", DetectedAt: "2026-11-23T10:00:00Z"}, "")
	s.publish(&merchantwalletv1.MerchantWalletWithdrawalCompleted{Meta: meta("c1", "test"), MerchantId: m.ID,
		WithdrawalId: "w-1", WalletAddress: m.WalletAddress, Amount: "30.25", ToAddress: "0xdest", TxHash: "0xwithdrawal",
		CompletedAt: "2026-11-23T10:01:00Z"}, "")
	got := s.waitEntries(m.ID, 3)

	// A restarted consumer sees the payment again.
	if err := s.svc.Stop(); err != nil {
		t.Fatal(err)
	}
	s.start()
	s.publish(pay, uuid.NewString())
	s.publish(confirmed(m, "pay-2", "0.000001"), "")
	got = s.waitEntries(m.ID, 4)
	waitFor(t, func() error { return s.consumersDrained() })
	got = s.ledger(m.ID)

	payments := 0
	for _, e := range got {
		if e.typ == "PAYMENT" && e.paymentID == "pay-1" {
			payments++
		}
	}
	if payments != 1 || len(got) != 4 {
		t.Fatalf("ledger %+v: %d entries for pay-1", got, payments)
	}
	byType := map[string]entry{}
	for i, e := range got {
		if i > 0 && e.before != got[i-1].after {
			t.Fatalf("entry %d: balance_before %s, previous balance_after %s", i, e.before, got[i-1].after)
		}
		if e.status != "COMPLETED" {
			t.Fatalf("entry %d status %s", i, e.status)
		}
		byType[e.typ+e.paymentID] = e
	}
	if w := byType["WITHDRAWAL"]; w.amount != "-30.2500000000000000" || w.sourceKey != "WITHDRAWAL:0xwithdrawal" {
		t.Fatalf("withdrawal %+v", w)
	}
	var balance int64
	var last int64
	if err := s.db.QueryRow(context.Background(), `SELECT m.balance_micros, l.balance_after_micros FROM merchants m
        JOIN merchant_ledger l ON l.merchant_id = m.id WHERE m.id = $1 ORDER BY l.seq DESC LIMIT 1`, m.ID).
		Scan(&balance, &last); err != nil {
		t.Fatal(err)
	}
	if balance != last || balance != 82_250_001 {
		t.Fatalf("balance %d, last balance_after %d", balance, last)
	}
	folded, err := domain.Rehydrate(s.events(m.ID))
	if err != nil || folded.Balance().Micros() != balance {
		t.Fatalf("fold of the stream: %v %v", folded, err)
	}
	// The relay puts each entry on the MERCHANTS stream once.
	subject := "merchant.test.c1.ledger_entry_recorded"
	waitFor(t, func() error {
		st, err := s.js.Stream(context.Background(), "MERCHANTS")
		if err != nil {
			return err
		}
		info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(subject))
		if err != nil {
			return err
		}
		if n := info.State.Subjects[subject]; n != 4 {
			return errorf("%d ledger events on MERCHANTS", n)
		}
		return nil
	})
}

// A payment for an unknown merchant, or for a merchant of another company, goes to the
// dead-letter stream, and the messages behind it are still applied.
func TestPaymentsForUnknownOrForeignMerchantsAreDeadLetteredWithoutBlocking(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	ghost := api.Merchant{ID: uuid.NewString(), CompanyID: "c1", Environment: "test", WalletAddress: "0xghost"}
	s.publish(confirmed(ghost, "pay-ghost", "1.00"), "")
	other := m
	other.CompanyID = "c2"
	s.publish(confirmed(other, "pay-other", "1.00"), "")
	s.publish(confirmed(m, "pay-ok", "2.00"), "")
	got := s.waitEntries(m.ID, 1)
	if len(got) != 1 || got[0].paymentID != "pay-ok" {
		t.Fatalf("ledger %+v", got)
	}
	svctest.WaitDeadLetters(t, s.js, "merchant-ledger-payments", 2)
}

// Issue 17 on the bus: an event with a string PostgreSQL text cannot hold (NUL) is dead-lettered
// with the reason before anything is stored, and the messages behind it are still applied.
func TestLedgerDeadLettersAPaymentHoldingNULWithoutBlockingTheRest(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	bad := confirmed(m, "pay-nul", "1.00")
	bad.BlockExplorerUrl = "https://scan.example/tx/\x00"
	s.publish(bad, "")
	s.publish(confirmed(m, "pay-ok", "2.00"), "")
	got := s.waitEntries(m.ID, 1)
	if len(got) != 1 || got[0].paymentID != "pay-ok" {
		t.Fatalf("ledger %+v", got)
	}
	msg := svctest.WaitDeadLetter(t, s.js, "merchant-ledger-payments")
	// The URL rule refuses it here (a control character); free-text fields refuse NUL by the
	// text rule (pkg/events TestValidateRefusesBrokenRulesNamingTheFieldAndTheReason).
	if reason := msg.Header.Get(bus.HeaderDLQReason); !strings.Contains(reason, "block_explorer_url") {
		t.Fatalf("dead letter reason %q", reason)
	}
}

// consumersDrained: every ledger message has been acknowledged.
func (s *stack) consumersDrained() error {
	for _, c := range []struct{ stream, durable string }{
		{"PAYMENTS", "merchant-ledger-payments"}, {"MERCHANT_WALLETS", "merchant-ledger-wallets"},
	} {
		if err := svctest.Drained(context.Background(), s.js, c.stream, c.durable); err != nil {
			return err
		}
	}
	return nil
}
