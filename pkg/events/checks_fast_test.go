package events

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The implementations the hand-written checks replaced, kept as the reference they must agree
// with.
var (
	refUUIDPattern       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	refUpperTokenPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	refDecimalPattern    = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

func refUUIDValue(v string) string {
	if !refUUIDPattern.MatchString(v) {
		return fmt.Sprintf("%q is not a UUID (8-4-4-4-12 hex digits)", v)
	}
	if strings.Trim(v, "0-") == "" {
		return "must not be the nil UUID"
	}
	return ""
}

func refTokenValue(v string) string {
	if len(v) > maxTokenLen {
		return fmt.Sprintf("is longer than %d bytes", maxTokenLen)
	}
	if strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Sprintf("%q must not contain whitespace or control characters", v)
	}
	return ""
}

func refUpperTokenValue(v string) string {
	if len(v) > maxTokenLen || !refUpperTokenPattern.MatchString(v) {
		return fmt.Sprintf("%q is not an upper-case token such as PAYMENT", v)
	}
	return ""
}

func refCheckCompanyID(id string) string {
	if id == "" {
		return "is required"
	}
	if i := strings.IndexFunc(id, func(r rune) bool {
		return r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r)
	}); i >= 0 {
		return fmt.Sprintf("%q must not contain '.', '*', '>', whitespace or control characters", id)
	}
	return ""
}

func refCheckAmount(v string, want sign) string {
	body, neg := v, false
	if strings.HasPrefix(v, "-") {
		body, neg = v[1:], true
	}
	if neg && (want == unsigned || want == positive) {
		return fmt.Sprintf("%q must not be signed", v)
	}
	if !refDecimalPattern.MatchString(body) {
		return fmt.Sprintf("%q is not a USDC decimal string (digits, optionally '.' and 1 to 6 decimals, no sign or exponent)", v)
	}
	whole, frac, _ := strings.Cut(body, ".")
	if len(frac) > usdcDecimals {
		return fmt.Sprintf("%q has more than 6 decimals", v)
	}
	micros, ok := refToMicros(whole, frac, neg)
	if !ok {
		return fmt.Sprintf("%q is out of range", v)
	}
	switch {
	case want == positive && micros == 0:
		return fmt.Sprintf("%q must be greater than zero", v)
	case want == negative && (!neg || micros == 0):
		return fmt.Sprintf("%q must be negative", v)
	}
	// The limits, compared as decimal numbers of whole USDC and decimals.
	magnitude := new(big.Rat)
	magnitude.SetString(body)
	switch {
	case want == balance && magnitude.Cmp(big.NewRat(1_000_000_000_000, 1)) > 0:
		return fmt.Sprintf("%q is beyond the balance limit of ±1000000000000.00", v)
	case want != balance && magnitude.Cmp(big.NewRat(1_000_000_000, 1)) > 0:
		return fmt.Sprintf("%q is above the maximum amount of 1000000000.00", v)
	}
	return ""
}

func refToMicros(whole, frac string, neg bool) (uint64, bool) {
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

// A differential pair: the check under test and its reference.
type checkPair struct {
	name     string
	got, ref func(string) string
}

var checkPairs = []checkPair{
	{"uuidValue", uuidValue, refUUIDValue},
	{"tokenValue", tokenValue, refTokenValue},
	{"upperTokenValue", upperTokenValue, refUpperTokenValue},
	{"checkCompanyID", checkCompanyID, refCheckCompanyID},
	{"checkAmount(unsigned)", func(v string) string { return checkAmount(v, unsigned) }, func(v string) string { return refCheckAmount(v, unsigned) }},
	{"checkAmount(positive)", func(v string) string { return checkAmount(v, positive) }, func(v string) string { return refCheckAmount(v, positive) }},
	{"checkAmount(signed)", func(v string) string { return checkAmount(v, signed) }, func(v string) string { return refCheckAmount(v, signed) }},
	{"checkAmount(negative)", func(v string) string { return checkAmount(v, negative) }, func(v string) string { return refCheckAmount(v, negative) }},
	{"checkAmount(balance)", func(v string) string { return checkAmount(v, balance) }, func(v string) string { return refCheckAmount(v, balance) }},
}

// handPicked are the edge cases of the checks: UUID shapes, spaces and controls of every kind,
// limits, amounts at the ends of the range.
var handPicked = []string{
	"", " ", "\n", "a", "0",
	"0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b90", "0B7E6F1C-5D1A-4C44-9A5E-2F3C1D7A8B90",
	"0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b90\n", "\n0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b90",
	"0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b9", "0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b900",
	"0b7e6f1c5-d1a-4c44-9a5e-2f3c1d7a8b90", "0b7e6f1c-5d1a4-c44-9a5e-2f3c1d7a8b90",
	"0b7e6f1c-5d1a-4c449-a5e-2f3c1d7a8b90", "0b7e6f1c-5d1a-4c44-9a5e2-f3c1d7a8b90",
	"0b7e6f1c_5d1a_4c44_9a5e_2f3c1d7a8b90", "0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b9g",
	"0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8bé", "{0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b90}",
	"0b7e6f1c5d1a4c449a5e2f3c1d7a8b90", "00000000-0000-0000-0000-000000000000",
	"00000000-0000-0000-0000-000000000001", "10000000-0000-0000-0000-000000000000",
	"000000000000000000000000000000000000", "------------------------------------",
	"pay_01", "pay 01", "pay\t01", "pay\u00a001", "pay\u2003", "\u3000", "pay\u0085", "pay\u200b",
	"pay\x00", "pay\x7f", "pay\x1f", "pay\u009f", "pay\u00a1", "ünïcödé", "\xff", "pay\xc2", "\xc2\xa0",
	"acme.co", "acme*", "acme>", "acme-3f2a9c", "ACME_CO", "ACME co", "é.", "\u2028",
	"PAYMENT", "FEE_ADJUSTMENT", "P", "_P", "9P", "PAYMENT\n", "Payment", "PAY-MENT", "PAYÉ",
	"12.50", "0", "0.0", "00", "012.50", "12.", ".5", "-", "-0", "-0.00", "--1", "+1", "1e5", "1.2.3",
	"12.1234567", "12.0000000", "12.123456", "0.000001", "-0.000001", "9223372036854.775807",
	"9223372036854.775808", "-9223372036854.775808", "-9223372036854.775809",
	"9999999999999", "99999999999999", "99999999999999999999", "18446744073709.551615",
	"18446744073709.551616", "1٣", "12.5\n", " 12.50",
	"1000000000", "1000000000.00", "1000000000.000001", "-1000000000", "-1000000000.000001", "999999999.999999",
	"1000000000000", "1000000000000.000001", "-1000000000000", "-1000000000000.000001", "999999999999.999999",
	strings.Repeat("x", maxTokenLen), strings.Repeat("x", maxTokenLen+1),
	strings.Repeat("X", maxTokenLen), strings.Repeat("X", maxTokenLen+1),
	strings.Repeat("x", maxTokenLen-1) + " ", strings.Repeat("é", maxTokenLen/2), strings.Repeat("é", maxTokenLen/2+1),
}

// generated builds strings from an alphabet of hex digits, hyphens and the bytes and runes
// the checks treat specially, in UUID-like and random shapes.
func generated() []string {
	alphabet := []string{"0", "9", "a", "f", "g", "A", "F", "G", "Z", "_", "-", ".", "*", ">", " ", "\t", "\n",
		"\x00", "\x7f", "\u00a0", "\u0085", "\u2003", "é", "\xff", "1", "5"}
	var out []string
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for range 20000 {
		var b strings.Builder
		switch next(3) {
		case 0: // UUID-shaped with one or two mutations
			u := []byte("0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b90")
			for range 1 + next(2) {
				u[next(len(u))] = alphabet[next(len(alphabet))][0]
			}
			b.Write(u)
		case 1: // random over the alphabet
			for range next(40) {
				b.WriteString(alphabet[next(len(alphabet))])
			}
		default: // amount-like
			digits := []string{"0", "1", "9", ".", "-", "5"}
			for range next(24) {
				b.WriteString(digits[next(len(digits))])
			}
		}
		out = append(out, b.String())
	}
	return out
}

func TestFastChecksMatchReference(t *testing.T) {
	t.Parallel()
	inputs := append(append([]string(nil), handPicked...), generated()...)
	for _, p := range checkPairs {
		for _, v := range inputs {
			if got, want := p.got(v), p.ref(v); got != want {
				t.Errorf("%s(%q) = %q, reference %q", p.name, v, got, want)
			}
		}
	}
}

func fuzzPair(f *testing.F, name string) {
	var pair checkPair
	for _, p := range checkPairs {
		if p.name == name {
			pair = p
		}
	}
	for _, v := range handPicked {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := pair.got(v), pair.ref(v); got != want {
			t.Errorf("%s(%q) = %q, reference %q", name, v, got, want)
		}
	})
}

func FuzzUUIDCheck(f *testing.F)       { fuzzPair(f, "uuidValue") }
func FuzzTokenCheck(f *testing.F)      { fuzzPair(f, "tokenValue") }
func FuzzUpperTokenCheck(f *testing.F) { fuzzPair(f, "upperTokenValue") }
func FuzzCompanyIDCheck(f *testing.F)  { fuzzPair(f, "checkCompanyID") }
func FuzzAmountCheck(f *testing.F) {
	for _, v := range handPicked {
		f.Add(v, uint8(0))
	}
	f.Fuzz(func(t *testing.T, v string, s uint8) {
		want := sign(s % 5)
		if got, ref := checkAmount(v, want), refCheckAmount(v, want); got != ref {
			t.Errorf("checkAmount(%q, %d) = %q, reference %q", v, want, got, ref)
		}
	})
}
