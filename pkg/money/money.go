// Package money holds exact USDC amounts. USDC has 6 decimals, so an Amount is a whole number
// of micro-USDC in an int64; there is no float anywhere, in parsing, formatting or arithmetic.
//
// Text is strict both ways (DESIGN.md §4): Parse accepts only a plain decimal with at most 6
// decimals and String always writes the canonical form, with at least 2 and at most 6
// decimals (`0.00`, `12.50`, `0.123456`, `-25.00`).
package money

import (
	"math"
	"strconv"
	"strings"
)

// Decimals is the number of decimal places of USDC.
const Decimals = 6

// microsPerUnit is the number of micro-USDC in one USDC.
const microsPerUnit = 1_000_000

// minStringDecimals is how many decimals String always writes.
const minStringDecimals = 2

// Amount is an exact amount of USDC, counted in micro-USDC (10^-6). The zero value is 0.00.
// Amounts compare with == and Cmp; arithmetic goes through Add and Sub, which report overflow
// instead of wrapping around.
type Amount struct {
	micros int64
}

// FromMicros returns the amount of m micro-USDC.
func FromMicros(m int64) Amount { return Amount{micros: m} }

// Micros returns the amount in micro-USDC.
func (a Amount) Micros() int64 { return a.micros }

// Parse reads a non-negative decimal amount: digits, optionally followed by a point and 1 to
// 6 digits ("0", "12", "12.5", "0.123456"). It rejects empty text, any sign, exponents,
// spaces, a bare point (".5", "5."), leading zeros ("01", "007.5"; "0.5" is fine), more than
// 6 decimals (even trailing zeros) and values beyond the int64 range of micro-USDC. The
// error is a *ParseError wrapping ErrInvalidAmount, ErrTooManyDecimals or ErrOverflow.
func Parse(s string) (Amount, error) {
	return parse(s, false)
}

// ParseSigned is Parse that also accepts one leading '-', for places where a negative amount
// is legitimate (pool debits, ledger corrections). "-0" and "-0.00" read as zero. It accepts
// every string that String produces, down to the most negative Amount.
func ParseSigned(s string) (Amount, error) {
	return parse(s, true)
}

// MustParse is ParseSigned that panics on error, for tests and constants.
func MustParse(s string) Amount {
	a, err := ParseSigned(s)
	if err != nil {
		panic(err)
	}
	return a
}

func parse(s string, signed bool) (Amount, error) {
	body, neg := s, false
	if signed && strings.HasPrefix(s, "-") {
		body, neg = s[1:], true
	}
	whole, frac, hasPoint := strings.Cut(body, ".")
	if !canonicalWhole(whole) || !allDigits(frac) || (hasPoint && frac == "") {
		return Amount{}, parseError(s, ErrInvalidAmount)
	}
	if len(frac) > Decimals {
		return Amount{}, parseError(s, ErrTooManyDecimals)
	}
	// The most negative int64 has no positive counterpart, so a negative value may be one
	// micro larger in magnitude.
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	u, ok := magnitude(whole, frac, limit)
	if !ok {
		return Amount{}, parseError(s, ErrOverflow)
	}
	if neg {
		// Two's complement: -u reinterpreted as int64 is exact for every u up to 2^63.
		return Amount{micros: int64(-u)}, nil
	}
	return Amount{micros: int64(u)}, nil
}

// canonicalWhole reports whether s is a non-empty run of digits without leading zeros, so
// that every amount has exactly one accepted spelling of its whole part.
func canonicalWhole(s string) bool {
	if s == "" || !allDigits(s) {
		return false
	}
	return len(s) == 1 || s[0] != '0'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// magnitude converts already validated whole and fraction digits to micro-USDC, reporting
// false when the result exceeds limit.
func magnitude(whole, frac string, limit uint64) (uint64, bool) {
	var w uint64
	for i := 0; i < len(whole); i++ {
		// w stays at most limit/microsPerUnit (about 9.2e12) before this step, so the
		// multiplication cannot wrap.
		w = w*10 + uint64(whole[i]-'0')
		if w > limit/microsPerUnit {
			return 0, false
		}
	}
	var f uint64
	for i := 0; i < Decimals; i++ {
		f *= 10
		if i < len(frac) {
			f += uint64(frac[i] - '0')
		}
	}
	u := w*microsPerUnit + f
	if u > limit {
		return 0, false
	}
	return u, true
}

// String returns the canonical text of a: an optional '-', the whole part without leading
// zeros or separators, a point, and at least 2 and at most 6 decimals with trailing zeros
// past the second trimmed: "0.00", "12.50", "0.123456", "-25.00", "1000000.00".
func (a Amount) String() string {
	u := uint64(a.micros)
	if a.micros < 0 {
		u = -u // exact for math.MinInt64 too, see parse
	}
	buf := make([]byte, 0, 28)
	if a.micros < 0 {
		buf = append(buf, '-')
	}
	buf = strconv.AppendUint(buf, u/microsPerUnit, 10)
	buf = append(buf, '.')
	var frac [Decimals]byte
	rest := u % microsPerUnit
	for i := Decimals - 1; i >= 0; i-- {
		frac[i] = byte('0' + rest%10)
		rest /= 10
	}
	n := Decimals
	for n > minStringDecimals && frac[n-1] == '0' {
		n--
	}
	return string(append(buf, frac[:n]...))
}
