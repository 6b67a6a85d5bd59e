package events

import (
	"fmt"
	"math"
	"strings"

	"github.com/payplat/platform/pkg/money"
)

// usdcDecimals is the number of decimals of USDC.
const usdcDecimals = 6

// sign says which signs an amount field allows.
type sign int

const (
	unsigned sign = iota // no sign; zero allowed
	positive             // no sign; greater than zero
	signed               // optional leading '-'
	negative             // leading '-' required; less than zero
	balance              // optional leading '-'; a balance, bounded by money.MaxBalance
)

// checkAmount returns why v is not a USDC decimal string of the given sign, or "".
func checkAmount(v string, want sign) string {
	body, neg := v, false
	if strings.HasPrefix(v, "-") {
		body, neg = v[1:], true
	}
	if neg && (want == unsigned || want == positive) {
		return fmt.Sprintf("%q must not be signed", v)
	}
	whole, frac, ok := splitDecimal(body)
	if !ok {
		return fmt.Sprintf("%q is not a USDC decimal string (digits, optionally '.' and 1 to 6 decimals, no sign or exponent)", v)
	}
	if len(frac) > usdcDecimals {
		return fmt.Sprintf("%q has more than 6 decimals", v)
	}
	micros, ok := toMicros(whole, frac, neg)
	if !ok {
		return fmt.Sprintf("%q is out of range", v)
	}
	switch {
	case want == positive && micros == 0:
		return fmt.Sprintf("%q must be greater than zero", v)
	case want == negative && (!neg || micros == 0):
		return fmt.Sprintf("%q must be negative", v)
	}
	// The platform's limits (pkg/money): an operation's amount at most money.MaxAmount, a
	// balance within ±money.MaxBalance. Beyond them no consumer could apply the event.
	if want == balance {
		if micros > uint64(money.MaxBalance.Micros()) {
			return fmt.Sprintf("%q is beyond the balance limit of ±%s", v, money.MaxBalance)
		}
	} else if micros > uint64(money.MaxAmount.Micros()) {
		return fmt.Sprintf("%q is above the maximum amount of %s", v, money.MaxAmount)
	}
	return ""
}

// splitDecimal splits the shape of an unsigned USDC amount into its whole digits and decimals:
// whole digits without leading zeros ("0" alone is fine), optionally a point and at least one
// decimal. The decimal count and range are checked separately to give precise reasons. It
// matches what pkg/money.Parse accepts, and is written out because a regular expression showed
// in a rebuild's profile.
func splitDecimal(s string) (whole, frac string, ok bool) {
	whole, frac, point := strings.Cut(s, ".")
	if whole == "" || (whole[0] == '0' && len(whole) > 1) || !allDigits(whole) {
		return "", "", false
	}
	if point && (frac == "" || !allDigits(frac)) {
		return "", "", false
	}
	return whole, frac, true
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// toMicros returns the magnitude of a checked decimal in micro-USDC and whether it fits an int64
// (one more for negative values), the range of pkg/money. At most 19 digits are accepted, which
// cannot overflow a uint64.
func toMicros(whole, frac string, neg bool) (uint64, bool) {
	if len(whole)+usdcDecimals > 19 {
		return 0, false
	}
	var u uint64
	for i := range len(whole) {
		u = u*10 + uint64(whole[i]-'0')
	}
	for i := range usdcDecimals {
		u *= 10
		if i < len(frac) {
			u += uint64(frac[i] - '0')
		}
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	return u, u <= limit
}
