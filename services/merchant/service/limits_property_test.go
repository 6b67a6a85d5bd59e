package service_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc/svctest"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/migrations"
)

// A random sequence of wallet deposits and withdrawals with amounts at and around the limits,
// queued while the ledger is down so that it arrives in batches that fail and are split: every
// merchant's balance is exactly the model's (each fact applied in stream order, refused when it
// would pass a limit), each refused fact is dead-lettered, none is lost, and the read tables equal
// a rebuild from the event store.
func TestLedgerAppliesRandomAmountsAtTheLimitsExactlyAndTheRebuildAgrees(t *testing.T) {
	s := newStack(t)
	ms := s.mustCreateN(2, "c1", "test")
	if err := s.svc.Stop(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 7))
	maxBalance := big.NewInt(money.MaxBalance.Micros())
	model := make([]*big.Int, len(ms))
	entries := make([]int, len(ms))
	for i := range model {
		model[i] = new(big.Int)
	}
	refused := 0
	for i := range 5000 {
		k := r.IntN(len(ms))
		m := ms[k]
		// Mostly the largest amount, so that the balances reach the limit.
		a := money.MaxAmount
		switch r.IntN(6) {
		case 0:
			a = money.FromMicros(1 + r.Int64N(money.MaxAmount.Micros()))
		case 1:
			a = money.FromMicros(1)
		}
		signed := big.NewInt(a.Micros())
		// Wallet facts only: they are one stream, applied in order by one consumer, so the model
		// (stream order) is exact; a payment travels on another stream, in another order.
		switch r.IntN(6) {
		case 0:
			signed.Neg(signed)
			s.publish(&merchantwalletv1.MerchantWalletWithdrawalCompleted{Meta: meta("c1", "test"), MerchantId: m.ID,
				WithdrawalId: fmt.Sprint("w-", i), WalletAddress: m.WalletAddress, Amount: a.String(),
				ToAddress: "0xdest", TxHash: fmt.Sprint("0xw", i), CompletedAt: "2026-11-23T10:01:00Z"}, "")
		default:
			s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: meta("c1", "test"), MerchantId: m.ID,
				WalletAddress: m.WalletAddress, Amount: a.String(), TxHash: fmt.Sprint("0xd", i),
				DetectedAt: "2026-11-23T10:01:00Z"}, "")
		}
		next := new(big.Int).Add(model[k], signed)
		if next.CmpAbs(maxBalance) > 0 {
			refused++
			continue
		}
		model[k], entries[k] = next, entries[k]+1
	}
	if refused == 0 {
		t.Fatal("the sequence never reached the limit: the test proves nothing")
	}
	s.start()
	waitFor(t, s.consumersDrained)
	for k, m := range ms {
		var balance int64
		if err := s.db.QueryRow(context.Background(), `SELECT balance_micros FROM merchants WHERE id = $1`, m.ID).Scan(&balance); err != nil {
			t.Fatal(err)
		}
		if big.NewInt(balance).Cmp(model[k]) != 0 || len(s.ledger(m.ID)) != entries[k] {
			t.Errorf("merchant %d: balance %d with %d entries, want %s with %d", k, balance, len(s.ledger(m.ID)), model[k], entries[k])
		}
	}
	if n, _ := svctest.DeadLetters(context.Background(), s.js, "merchant-ledger-wallets"); int(n) != refused {
		t.Errorf("%d dead letters, want the %d refused facts", n, refused)
	}
	def := adapters.ReadModelDefinition(eventstore.New(s.db), migrations.Schema)
	if diffs, _, err := projection.Verify(context.Background(), s.db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify: %v %+v", err, diffs)
	}
}
