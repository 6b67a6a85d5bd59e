package money

import (
	"fmt"
	"math"
)

// Add returns a+b, or ErrOverflow when the sum leaves the int64 range of micro-USDC.
func (a Amount) Add(b Amount) (Amount, error) {
	sum := a.micros + b.micros
	// Signed overflow happened iff both operands share a sign that the result does not.
	if (a.micros >= 0) == (b.micros >= 0) && (sum >= 0) != (a.micros >= 0) {
		return Amount{}, fmt.Errorf("adding %s and %s: %w", a, b, ErrOverflow)
	}
	return Amount{micros: sum}, nil
}

// Sub returns a-b, or ErrOverflow when the difference leaves the int64 range of micro-USDC.
func (a Amount) Sub(b Amount) (Amount, error) {
	diff := a.micros - b.micros
	// Signed overflow happened iff the operands differ in sign and the result's sign is not a's.
	if (a.micros >= 0) != (b.micros >= 0) && (diff >= 0) != (a.micros >= 0) {
		return Amount{}, fmt.Errorf("subtracting %s from %s: %w", b, a, ErrOverflow)
	}
	return Amount{micros: diff}, nil
}

// Neg returns -a. It fails with ErrOverflow only for the most negative Amount
// (-9223372036854.775808), whose opposite does not fit; the negation of anything Parse
// accepts always succeeds.
func (a Amount) Neg() (Amount, error) {
	if a.micros == math.MinInt64 {
		return Amount{}, fmt.Errorf("negating %s: %w", a, ErrOverflow)
	}
	return Amount{micros: -a.micros}, nil
}

// Cmp compares a and b and returns -1 when a < b, 0 when a == b and +1 when a > b.
func (a Amount) Cmp(b Amount) int {
	switch {
	case a.micros < b.micros:
		return -1
	case a.micros > b.micros:
		return 1
	default:
		return 0
	}
}

// IsZero reports whether a is 0.00.
func (a Amount) IsZero() bool { return a.micros == 0 }

// IsNegative reports whether a < 0.
func (a Amount) IsNegative() bool { return a.micros < 0 }

// IsPositive reports whether a > 0.
func (a Amount) IsPositive() bool { return a.micros > 0 }
