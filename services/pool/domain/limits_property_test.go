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
	"github.com/payplat/platform/services/pool/domain"
)

// Random sequences of facts of every type, with amounts at and around the limits, recorded on a
// pool that starts anywhere within them: every movement is exact (amount, before and after
// chain, checked against arbitrary-precision integers), a fact beyond the limits is refused
// without changing the pool, the balance is always within ±money.MaxBalance, and the low-balance
// alert fires once per crossing.
func TestPoolRecordsRandomFactsExactlyAndRefusesOnlyWhatPassesTheLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 2))
	maxAmount, maxBalance := big.NewInt(money.MaxAmount.Micros()), big.NewInt(money.MaxBalance.Micros())
	for run := range 300 {
		start := r.Int64N(2*money.MaxBalance.Micros()+1) - money.MaxBalance.Micros()
		if run%3 == 0 {
			start = money.MaxBalance.Micros() - r.Int64N(money.MaxAmount.Micros())
		}
		p := domain.Restore(id, money.FromMicros(start), domain.DefaultSettings(), 1)
		exact := big.NewInt(start)
		for i := range 300 {
			f := randomFact(r, i)
			signed := big.NewInt(f.Amount.Micros())
			if f.Type == domain.Debit || f.Type == domain.Withdrawal {
				signed.Neg(signed)
			}
			want := new(big.Int).Add(exact, signed)
			changes := len(p.Changes())
			wasLow := p.IsLow()
			m, err := p.Record(f, uuid.New(), time.Now())
			switch {
			case big.NewInt(f.Amount.Micros()).Cmp(maxAmount) > 0 || want.CmpAbs(maxBalance) > 0:
				if !errors.Is(err, domain.ErrAmountOutOfRange) || !money.IsLimit(err) {
					t.Fatalf("run %d: %s of %s at %s: %v, want a refusal by the limits", run, f.Type, f.Amount, p.Balance(), err)
				}
				if len(p.Changes()) != changes || big.NewInt(p.Balance().Micros()).Cmp(exact) != 0 {
					t.Fatalf("run %d: a refused fact changed the pool", run)
				}
				continue
			case err != nil:
				t.Fatalf("run %d: %s of %s at %s: %v", run, f.Type, f.Amount, p.Balance(), err)
			}
			if big.NewInt(m.BalanceBefore.Micros()).Cmp(exact) != 0 || big.NewInt(m.Amount.Micros()).Cmp(signed) != 0 ||
				big.NewInt(m.BalanceAfter.Micros()).Cmp(want) != 0 {
				t.Fatalf("run %d: movement %s %s → %s, want %s %s → %s", run, m.BalanceBefore, m.Amount, m.BalanceAfter, exact, signed, want)
			}
			exact = want
			alerts := len(p.Changes()) - changes - 1
			if crossed := !wasLow && p.IsLow(); (alerts == 1) != crossed || alerts > 1 {
				t.Fatalf("run %d: %d alerts for a change from low=%v to low=%v", run, alerts, wasLow, p.IsLow())
			}
		}
		if big.NewInt(p.Balance().Micros()).Cmp(exact) != 0 {
			t.Fatalf("run %d: balance %s, want %s", run, p.Balance(), exact)
		}
	}
}

func randomFact(r *rand.Rand, i int) domain.Fact {
	types := []domain.MovementType{domain.Deposit, domain.Debit, domain.Credit, domain.Withdrawal}
	f := domain.Fact{Type: types[r.IntN(len(types))], Key: fmt.Sprint("k", i), TxHash: fmt.Sprintf("0x%d", i)}
	switch r.IntN(5) {
	case 0:
		f.Amount = money.MaxAmount
	case 1:
		f.Amount = money.FromMicros(money.MaxAmount.Micros() + 1 + r.Int64N(money.MaxAmount.Micros()))
	case 2:
		f.Amount = money.FromMicros(1)
	default:
		f.Amount = money.FromMicros(1 + r.Int64N(money.MaxAmount.Micros()))
	}
	if f.Type == domain.Debit || f.Type == domain.Credit {
		f.Payment = &domain.PaymentRef{PaymentID: fmt.Sprint("pay", i), MerchantID: "m"}
	}
	if f.Type == domain.Withdrawal {
		f.WithdrawalID, f.ToAddress = fmt.Sprint("w", i), "0xdest"
	}
	return f
}
