package events

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// usdcDecimals is the number of decimals of USDC.
const usdcDecimals = 6

// decimalPattern is the shape of an unsigned USDC amount: whole digits without leading zeros
// ("0" alone is fine), optionally a point and at least one decimal. The decimal count and range
// are checked separately to give precise reasons. It matches what pkg/money.Parse accepts.
var decimalPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// sign says which signs an amount field allows.
type sign int

const (
	unsigned sign = iota // no sign; zero allowed
	positive             // no sign; greater than zero
	signed               // optional leading '-'
	negative             // leading '-' required; less than zero
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
	if !decimalPattern.MatchString(body) {
		return fmt.Sprintf("%q is not a USDC decimal string (digits, optionally '.' and 1 to 6 decimals, no sign or exponent)", v)
	}
	whole, frac, _ := strings.Cut(body, ".")
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
	return ""
}

// toMicros returns the magnitude of a checked decimal in micro-USDC and whether it fits an int64
// (one more for negative values), the range of pkg/money.
func toMicros(whole, frac string, neg bool) (uint64, bool) {
	digits := whole + frac + strings.Repeat("0", usdcDecimals-len(frac))
	if len(digits) > 19 {
		return 0, false
	}
	u, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	return u, u <= limit
}
