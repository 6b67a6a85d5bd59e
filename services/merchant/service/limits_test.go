package service_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/svc/svctest"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
)

// The reproduction of issue 41 on the bus: three payment.confirmed of 9223372036854.775807 to one
// merchant made the shared ledger consumer fail on "amount out of range" and retry for ever, so
// that no company's ledger moved. The amount is now outside the contract (above
// money.MaxAmount): each is dead-lettered with the reason, and another company's payment behind
// them is recorded.
func TestRegressionOverflowingPaymentsNoLongerStopEveryCompanysLedger(t *testing.T) {
	s := newStack(t)
	victim := s.mustCreate("c1", "test")
	other := s.mustCreate("c2", "live")
	for i := range 3 {
		s.publish(confirmed(victim, fmt.Sprintf("pay-huge-%d", i), "9223372036854.775807"), "")
	}
	s.publish(confirmed(other, "pay-ok", "2.00"), "")
	if got := s.waitEntries(other.ID, 1); got[0].paymentID != "pay-ok" || !sameAmount(got[0].after, "2") {
		t.Fatalf("other company's ledger %+v", got)
	}
	svctest.WaitDeadLetters(t, s.js, "merchant-ledger-payments", 3)
	msg := svctest.WaitDeadLetter(t, s.js, "merchant-ledger-payments")
	if kind, reason := msg.Header.Get(bus.HeaderDLQReasonKind), msg.Header.Get(bus.HeaderDLQReason); kind != bus.ReasonInvalid ||
		!strings.Contains(reason, "above the maximum amount of 1000000000.00") {
		t.Fatalf("dead letter %s: %s", kind, reason)
	}
	if n := len(s.ledger(victim.ID)); n != 0 {
		t.Fatalf("%d entries for the overflowing payments", n)
	}
	waitFor(t, s.consumersDrained)
}

// A valid payment that would take its merchant past the balance limit (money.MaxBalance) is
// refused by the ledger before anything is written and set aside in the dead-letter stream with
// its reason (kind "limit"), where an operator sees it and can re-drive it once the balance
// allows; the payments behind it, of the same company and of others, are recorded.
func TestAPaymentPastTheBalanceLimitIsSetAsideWithItsReasonAndNothingElseWaits(t *testing.T) {
	s := newStack(t)
	full := s.mustCreate("c1", "test")
	neighbour := s.mustCreate("c1", "test")
	other := s.mustCreate("c2", "test")
	// 1,000 deposits of the largest amount bring full to exactly the balance limit.
	deposits := int(money.MaxBalance.Micros() / money.MaxAmount.Micros())
	for i := range deposits {
		s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: meta(full.CompanyID, full.Environment),
			MerchantId: full.ID, WalletAddress: full.WalletAddress, Amount: money.MaxAmount.String(),
			TxHash: fmt.Sprintf("0xdeposit%04d", i), DetectedAt: "2026-11-23T10:00:00Z"}, "")
	}
	s.waitEntries(full.ID, deposits)
	s.publish(confirmed(full, "pay-past-limit", "0.01"), "")
	s.publish(confirmed(neighbour, "pay-neighbour", "3.00"), "")
	s.publish(confirmed(other, "pay-other", "4.00"), "")
	s.waitEntries(neighbour.ID, 1)
	s.waitEntries(other.ID, 1)
	msg := svctest.WaitDeadLetter(t, s.js, "merchant-ledger-payments")
	kind, reason := msg.Header.Get(bus.HeaderDLQReasonKind), msg.Header.Get(bus.HeaderDLQReason)
	if kind != bus.ReasonLimit || !strings.Contains(reason, "balance would pass its limit") || !strings.Contains(reason, full.ID) {
		t.Fatalf("dead letter %s: %s", kind, reason)
	}
	if msg.Header.Get(bus.HeaderDLQOriginalSubject) != "payment.test.c1.confirmed" {
		t.Fatalf("dead letter of %q", msg.Header.Get(bus.HeaderDLQOriginalSubject))
	}
	got := s.ledger(full.ID)
	if len(got) != deposits || !sameAmount(got[len(got)-1].after, "1000000000000") {
		t.Fatalf("the full merchant has %d entries ending at %s", len(got), got[len(got)-1].after)
	}
	waitFor(t, s.consumersDrained)
	// Once a withdrawal lowers the balance, the operator's re-drive (the dead letter's message
	// published again on its subject, as payplat-ctl dlq redrive does) records it.
	s.publish(&merchantwalletv1.MerchantWalletWithdrawalCompleted{Meta: meta(full.CompanyID, full.Environment),
		MerchantId: full.ID, WithdrawalId: "w-1", WalletAddress: full.WalletAddress, Amount: "100.00",
		ToAddress: "0xbank", TxHash: "0xwithdrawal", CompletedAt: "2026-11-23T11:00:00Z"}, "")
	s.waitEntries(full.ID, deposits+1)
	redrive(t, s.js, msg)
	if got := s.waitEntries(full.ID, deposits+2); got[len(got)-1].paymentID != "pay-past-limit" ||
		!sameAmount(got[len(got)-1].after, "999999999900.01") {
		t.Fatalf("after the re-drive: %+v", got[len(got)-1])
	}
}

// redrive publishes a dead letter's message again on its original subject, with its original
// headers and a new message id, as payplat-ctl dlq redrive does.
func redrive(t *testing.T, js jetstream.JetStream, letter *jetstream.RawStreamMsg) {
	t.Helper()
	h := nats.Header{}
	for k, vs := range letter.Header {
		if !strings.HasPrefix(k, "Dlq-") && !strings.HasPrefix(k, "Nats-") {
			h[k] = vs
		}
	}
	h.Set(nats.MsgIdHdr, fmt.Sprintf("redrive:%d", letter.Sequence))
	m := &nats.Msg{Subject: letter.Header.Get(bus.HeaderDLQOriginalSubject), Header: h, Data: letter.Data}
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// sameAmount compares two decimal texts as numbers (the ledger helper reads numeric text with
// PostgreSQL's scale).
func sameAmount(a, b string) bool {
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	return okx && oky && x.Cmp(y) == 0
}
