package money

import (
	"errors"
	"fmt"
)

// The platform's limits on amounts (docs/RELIABILITY.md, "Limits"). They are chosen so that no
// sum money code computes can leave the int64 range of micro-USDC: a balance within MaxBalance
// plus or minus an amount within MaxAmount stays below 1.001e18 micro-USDC, about a ninth of
// the int64 range, so Add and Sub on accepted values never overflow, and a balance that would
// pass MaxBalance is refused, the same way in every service, before anything is written.
var (
	// MaxAmount is the largest amount of one operation: a payment, a deposit, a withdrawal, a
	// refund, a merchant wallet movement, and a pool's low-balance threshold (1,000,000,000.00
	// USDC, one billion). Stripe caps a charge at 999,999.99 USD; a treasury deposit may be
	// larger than any payment, hence three more digits.
	MaxAmount = FromMicros(1_000_000_000 * microsPerUnit)
	// MaxBalance is the largest magnitude a pool's or a merchant's balance may reach
	// (1,000,000,000,000.00 USDC, one trillion): a balance stays within ±MaxBalance.
	MaxBalance = FromMicros(1_000_000_000_000 * microsPerUnit)
)

// Limit errors, matched with errors.Is. Both are permanent: the same input can never succeed.
var (
	// ErrAboveMaxAmount reports an operation's amount above MaxAmount.
	ErrAboveMaxAmount = errors.New("amount above the maximum of one operation")
	// ErrBalanceLimit reports a change that would take a balance beyond ±MaxBalance.
	ErrBalanceLimit = errors.New("balance would pass its limit")
)

// IsLimit reports whether err is a refusal by the platform's limits or an arithmetic overflow:
// an error that no retry can fix.
func IsLimit(err error) bool {
	return errors.Is(err, ErrAboveMaxAmount) || errors.Is(err, ErrBalanceLimit) || errors.Is(err, ErrOverflow)
}

// CheckAmount returns an error wrapping ErrAboveMaxAmount when the magnitude of a passes
// MaxAmount, and nil otherwise.
func CheckAmount(a Amount) error {
	if abs(a.micros) > MaxAmount.micros {
		return fmt.Errorf("%s: %w of %s USDC", a, ErrAboveMaxAmount, MaxAmount)
	}
	return nil
}

// CheckBalance returns an error wrapping ErrBalanceLimit when the magnitude of b passes
// MaxBalance, and nil otherwise.
func CheckBalance(b Amount) error {
	if abs(b.micros) > MaxBalance.micros {
		return fmt.Errorf("%s: %w of ±%s USDC", b, ErrBalanceLimit, MaxBalance)
	}
	return nil
}

// ParseAmount is Parse limited to one operation's amount: it also rejects an amount above
// MaxAmount, with a *ParseError wrapping ErrAboveMaxAmount.
func ParseAmount(s string) (Amount, error) {
	a, err := Parse(s)
	if err != nil {
		return Amount{}, err
	}
	if a.micros > MaxAmount.micros {
		return Amount{}, parseError(s, ErrAboveMaxAmount)
	}
	return a, nil
}

// Move returns the balance after adding delta (signed) to balance: an error wrapping
// ErrAboveMaxAmount when delta passes MaxAmount, ErrBalanceLimit when the result would pass
// MaxBalance, and ErrOverflow only for operands outside both limits (data written before the
// limits existed). A balance and a delta within the limits never overflow.
func Move(balance, delta Amount) (Amount, error) {
	if err := CheckAmount(delta); err != nil {
		return Amount{}, err
	}
	after, err := balance.Add(delta)
	if err != nil {
		return Amount{}, err
	}
	if err := CheckBalance(after); err != nil {
		return Amount{}, fmt.Errorf("moving the balance %s by %s: %w", balance, delta, err)
	}
	return after, nil
}

// abs is the magnitude of m as a uint64-safe int64 comparison value: the most negative int64,
// which has no positive counterpart, compares above every limit.
func abs(m int64) int64 {
	if m < 0 {
		if -m < 0 { // math.MinInt64
			return 1<<63 - 1
		}
		return -m
	}
	return m
}
