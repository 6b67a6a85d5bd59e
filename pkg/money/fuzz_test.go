package money_test

import (
	"math"
	"testing"

	"github.com/payplat/platform/pkg/money"
)

// FuzzParseFormat checks that text and amounts round-trip: whatever Parse or ParseSigned
// accepts formats to a canonical string that parses back to the same amount, and every int64
// of micro-USDC formats to a string that ParseSigned reads back exactly.
func FuzzParseFormat(f *testing.F) {
	seeds := []struct {
		s string
		m int64
	}{
		{"0", 0},
		{"0.00", 1},
		{"12.5", 12_500_000},
		{"12.50", -1},
		{"0.123456", 123_456},
		{"-25", -25_000_000},
		{"-0", 100_000},
		{"1000000", 1_000_000_000_000},
		{"9223372036854.775807", math.MaxInt64},
		{"-9223372036854.775808", math.MinInt64},
		{"9223372036854.775808", math.MinInt64 + 1},
		{"1.1234567", 10},
		{"007.5", -10},
		{".5", 999_999},
		{"5.", -999_999},
		{"1e5", 1},
		{"+1", 0},
		{" 1", 0},
		{"", 0},
	}
	for _, seed := range seeds {
		f.Add(seed.s, seed.m)
	}
	f.Fuzz(func(t *testing.T, s string, m int64) {
		checkTextRoundTrip(t, s)
		checkMicrosRoundTrip(t, m)
	})
}

func checkTextRoundTrip(t *testing.T, s string) {
	a, errUnsigned := money.Parse(s)
	signed, errSigned := money.ParseSigned(s)
	if errUnsigned == nil {
		// ParseSigned is a superset of Parse and agrees with it.
		if errSigned != nil || signed != a {
			t.Fatalf("Parse(%q) = %s but ParseSigned = %s, %v", s, a, signed, errSigned)
		}
		if a.IsNegative() {
			t.Fatalf("Parse(%q) = %s is negative", s, a)
		}
	}
	if errSigned != nil {
		return
	}
	text := signed.String()
	back, err := money.ParseSigned(text)
	if err != nil || back != signed {
		t.Fatalf("ParseSigned(%q) = %s, which reads back as %s, %v", s, text, back, err)
	}
	if !signed.IsNegative() {
		if back, err := money.Parse(text); err != nil || back != signed {
			t.Fatalf("Parse(%q) = %s, %v; want %s", text, back, err, signed)
		}
	}
	if again := back.String(); again != text {
		t.Fatalf("String not canonical: %q then %q", text, again)
	}
	checkCanonical(t, text)
}

func checkMicrosRoundTrip(t *testing.T, m int64) {
	text := money.FromMicros(m).String()
	back, err := money.ParseSigned(text)
	if err != nil || back.Micros() != m {
		t.Fatalf("FromMicros(%d).String() = %q, which reads back as %d, %v", m, text, back.Micros(), err)
	}
	checkCanonical(t, text)
	data, err := money.FromMicros(m).MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON(%d): %v", m, err)
	}
	var decoded money.Amount
	if err := decoded.UnmarshalJSON(data); err != nil || decoded.Micros() != m {
		t.Fatalf("JSON %s reads back as %d, %v; want %d", data, decoded.Micros(), err, m)
	}
}

// checkCanonical asserts the output shape of DESIGN.md §4: optional '-', whole digits without
// leading zeros, a point, 2 to 6 decimals, no trailing zero past the second, no "-0.00".
func checkCanonical(t *testing.T, text string) {
	t.Helper()
	body := text
	if len(body) > 0 && body[0] == '-' {
		body = body[1:]
		if body == "0.00" {
			t.Fatalf("negative zero %q", text)
		}
	}
	point := -1
	for i := 0; i < len(body); i++ {
		if body[i] == '.' {
			point = i
			break
		}
	}
	if point < 1 {
		t.Fatalf("%q has no whole part", text)
	}
	whole, frac := body[:point], body[point+1:]
	if len(whole) > 1 && whole[0] == '0' {
		t.Fatalf("%q has a leading zero", text)
	}
	if len(frac) < 2 || len(frac) > 6 {
		t.Fatalf("%q has %d decimals", text, len(frac))
	}
	if len(frac) > 2 && frac[len(frac)-1] == '0' {
		t.Fatalf("%q has a trailing zero past 2 decimals", text)
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				t.Fatalf("%q has a non-digit", text)
			}
		}
	}
}
