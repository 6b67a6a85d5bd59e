package money_test

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/payplat/platform/pkg/money"
)

// randomAmount draws an operation amount, signed, from a distribution that favours the limits:
// the smallest amount, the largest, one micro-USDC above it, and anything in between.
func randomAmount(r *rand.Rand) money.Amount {
	var m int64
	switch r.IntN(6) {
	case 0:
		m = 1
	case 1:
		m = money.MaxAmount.Micros()
	case 2:
		m = money.MaxAmount.Micros() + 1
	case 3:
		m = r.Int64N(money.MaxAmount.Micros()) + 1
	case 4:
		m = r.Int64N(1_000_000_000) + 1 // up to 1,000 USDC
	default:
		m = r.Int64N(money.MaxBalance.Micros()) // far above the maximum
	}
	if r.IntN(2) == 0 {
		m = -m
	}
	return money.FromMicros(m)
}

// Random sequences of moves over balances that start anywhere within the limits, including at
// them, never overflow, never lose a micro-USDC: every accepted move is exact (checked against
// arbitrary-precision integers), a refused one changes nothing and says which limit, and a move
// is refused exactly when the amount or the result is beyond the limits.
func TestMovesWithinTheLimitsAreExactAndTheRestAreRefused(t *testing.T) {
	maxAmount, maxBalance := big.NewInt(money.MaxAmount.Micros()), big.NewInt(money.MaxBalance.Micros())
	r := rand.New(rand.NewPCG(41, 5))
	for run := range 2_000 {
		var start int64
		switch run % 4 {
		case 0:
			start = money.MaxBalance.Micros()
		case 1:
			start = -money.MaxBalance.Micros()
		default:
			start = r.Int64N(2*money.MaxBalance.Micros()+1) - money.MaxBalance.Micros()
		}
		balance := money.FromMicros(start)
		exact := big.NewInt(start)
		for range 200 {
			delta := randomAmount(r)
			after, err := money.Move(balance, delta)
			want := new(big.Int).Add(exact, big.NewInt(delta.Micros()))
			d := big.NewInt(delta.Micros())
			switch {
			case d.CmpAbs(maxAmount) > 0:
				if !errors.Is(err, money.ErrAboveMaxAmount) {
					t.Fatalf("moving %s by %s: %v, want the maximum amount refused", balance, delta, err)
				}
			case want.CmpAbs(maxBalance) > 0:
				if !errors.Is(err, money.ErrBalanceLimit) {
					t.Fatalf("moving %s by %s: %v, want the balance limit refused", balance, delta, err)
				}
			default:
				if err != nil || big.NewInt(after.Micros()).Cmp(want) != 0 {
					t.Fatalf("moving %s by %s: %s, %v; want %s", balance, delta, after, err, want)
				}
				balance, exact = after, want
			}
			if !money.IsLimit(err) && err != nil {
				t.Fatalf("a refusal that IsLimit does not know: %v", err)
			}
			if balance.Cmp(money.MaxBalance) > 0 || balance.Cmp(money.FromMicros(-money.MaxBalance.Micros())) < 0 {
				t.Fatalf("balance %s beyond the limit", balance)
			}
		}
	}
}

func TestParseAmountRefusesAboveTheMaximumOnly(t *testing.T) {
	for s, ok := range map[string]bool{
		"1000000000": true, "1000000000.00": true, "1000000000.000000": true, "999999999.999999": true, "0": true,
		"1000000000.000001": false, "1000000001": false, "9223372036854.775807": false, "-1": false, "1.0000001": false,
	} {
		_, err := money.ParseAmount(s)
		if (err == nil) != ok {
			t.Errorf("ParseAmount(%q): %v", s, err)
		}
		if !ok && s != "-1" && s != "1.0000001" && !errors.Is(err, money.ErrAboveMaxAmount) {
			t.Errorf("ParseAmount(%q): %v, want ErrAboveMaxAmount", s, err)
		}
	}
	if err := money.CheckBalance(money.FromMicros(-money.MaxBalance.Micros() - 1)); !errors.Is(err, money.ErrBalanceLimit) {
		t.Errorf("CheckBalance below the limit: %v", err)
	}
	if err := money.CheckAmount(money.FromMicros(-1 << 63)); !errors.Is(err, money.ErrAboveMaxAmount) {
		t.Errorf("CheckAmount of the most negative amount: %v", err)
	}
}
