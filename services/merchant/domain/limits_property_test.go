package domain_test

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/merchant/domain"
)

// Random runs of ledger entries (payments, deposits, withdrawals) with amounts at and around the
// limits: RecordEntries chains the balances exactly (checked against arbitrary-precision
// integers), refuses a run that would pass a limit with domain.ErrLimit and leaves the merchant
// unchanged, and every balance stays within ±money.MaxBalance.
func TestLedgerRecordsRandomEntriesExactlyAndRefusesOnlyWhatPassesTheLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 3))
	maxAmount, maxBalance := big.NewInt(money.MaxAmount.Micros()), big.NewInt(money.MaxBalance.Micros())
	now := time.Now()
	for run := range 300 {
		m := newMerchant(t, domain.StatusActive)
		exact := new(big.Int)
		// Fill the balance close to the limit in steps of the largest amount.
		for range r.IntN(1001) {
			recs, err := m.RecordEntries([]domain.NewEntry{entry(domain.EntryDeposit, money.MaxAmount)}, now)
			if err != nil {
				break
			}
			if err := m.Apply(recs[0]); err != nil {
				t.Fatal(err)
			}
			exact.Add(exact, maxAmount)
		}
		for range 100 {
			n := 1 + r.IntN(5)
			var es []domain.NewEntry
			want := new(big.Int).Set(exact)
			refused := false
			for range n {
				e := randomEntry(r)
				es = append(es, e)
				want.Add(want, big.NewInt(e.Amount.Micros()))
				if new(big.Int).Abs(big.NewInt(e.Amount.Micros())).Cmp(maxAmount) > 0 || want.CmpAbs(maxBalance) > 0 {
					refused = true
				}
			}
			before := m.Balance()
			recs, err := m.RecordEntries(es, now)
			if refused {
				if !errors.Is(err, domain.ErrLimit) || !money.IsLimit(err) || m.Balance() != before {
					t.Fatalf("run %d: a run past the limits: %v, balance %s → %s", run, err, before, m.Balance())
				}
				continue
			}
			if err != nil {
				t.Fatalf("run %d: %v", run, err)
			}
			running := new(big.Int).Set(exact)
			for i, rec := range recs {
				if big.NewInt(rec.BalanceBefore.Micros()).Cmp(running) != 0 {
					t.Fatalf("run %d: entry %d before %s, want %s", run, i, rec.BalanceBefore, running)
				}
				running.Add(running, big.NewInt(rec.Amount.Micros()))
				if big.NewInt(rec.BalanceAfter.Micros()).Cmp(running) != 0 {
					t.Fatalf("run %d: entry %d after %s, want %s", run, i, rec.BalanceAfter, running)
				}
				if err := m.Apply(rec); err != nil {
					t.Fatal(err)
				}
			}
			exact = running
			if big.NewInt(m.Balance().Micros()).Cmp(exact) != 0 {
				t.Fatalf("run %d: balance %s, want %s", run, m.Balance(), exact)
			}
		}
	}
}

var entrySeq int

func entry(t domain.EntryType, a money.Amount) domain.NewEntry {
	entrySeq++
	e := domain.NewEntry{ID: uuid.New(), Type: t, Amount: a, TxHash: fmt.Sprint("0x", entrySeq), PaymentID: fmt.Sprint("pay", entrySeq)}
	if t == domain.EntryWithdrawal {
		e.Amount, _ = a.Neg()
	}
	return e
}

func randomEntry(r *rand.Rand) domain.NewEntry {
	var a money.Amount
	switch r.IntN(5) {
	case 0:
		a = money.MaxAmount
	case 1:
		a = money.FromMicros(money.MaxAmount.Micros() + 1)
	case 2:
		a = money.FromMicros(1)
	default:
		a = money.FromMicros(1 + r.Int64N(money.MaxAmount.Micros()))
	}
	types := []domain.EntryType{domain.EntryPayment, domain.EntryDeposit, domain.EntryWithdrawal}
	return entry(types[r.IntN(len(types))], a)
}
