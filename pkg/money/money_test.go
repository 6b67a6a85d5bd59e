package money_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/payplat/platform/pkg/money"
)

func TestParseAcceptsOnlyPlainUnsignedDecimalsWithUpToSixPlaces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		micros int64
		err    error
	}{
		{in: "0", micros: 0},
		{in: "0.0", micros: 0},
		{in: "0.00", micros: 0},
		{in: "0.5", micros: 500_000},
		{in: "0.000001", micros: 1},
		{in: "0.123456", micros: 123_456},
		{in: "1", micros: 1_000_000},
		{in: "12.5", micros: 12_500_000},
		{in: "12.50", micros: 12_500_000},
		{in: "12.500000", micros: 12_500_000},
		{in: "1000000", micros: 1_000_000_000_000},
		{in: "9223372036854.775807", micros: math.MaxInt64},
		{in: "9223372036854", micros: 9_223_372_036_854_000_000},

		{in: "", err: money.ErrInvalidAmount},
		{in: "-1", err: money.ErrInvalidAmount},
		{in: "-0", err: money.ErrInvalidAmount},
		{in: "+1", err: money.ErrInvalidAmount},
		{in: "1e5", err: money.ErrInvalidAmount},
		{in: "1E5", err: money.ErrInvalidAmount},
		{in: "1.5e2", err: money.ErrInvalidAmount},
		{in: " 1", err: money.ErrInvalidAmount},
		{in: "1 ", err: money.ErrInvalidAmount},
		{in: "1 000", err: money.ErrInvalidAmount},
		{in: "1,000.00", err: money.ErrInvalidAmount},
		{in: "1_000", err: money.ErrInvalidAmount},
		{in: ".5", err: money.ErrInvalidAmount},
		{in: "5.", err: money.ErrInvalidAmount},
		{in: ".", err: money.ErrInvalidAmount},
		{in: "01", err: money.ErrInvalidAmount},
		{in: "00", err: money.ErrInvalidAmount},
		{in: "007.5", err: money.ErrInvalidAmount},
		{in: "00.5", err: money.ErrInvalidAmount},
		{in: "1.2.3", err: money.ErrInvalidAmount},
		{in: "0x10", err: money.ErrInvalidAmount},
		{in: "NaN", err: money.ErrInvalidAmount},
		{in: "Infinity", err: money.ErrInvalidAmount},
		{in: "١٢", err: money.ErrInvalidAmount}, // non-ASCII digits
		{in: "1.-5", err: money.ErrInvalidAmount},
		{in: "1.1234567", err: money.ErrTooManyDecimals},
		{in: "1.1234560", err: money.ErrTooManyDecimals},
		{in: "0.0000001", err: money.ErrTooManyDecimals},
		{in: "9223372036854.775808", err: money.ErrOverflow},
		{in: "9223372036855", err: money.ErrOverflow},
		{in: "99999999999999999999999999999999", err: money.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := money.Parse(tt.in)
			checkParse(t, tt.in, got, err, tt.micros, tt.err)
		})
	}
}

func TestParseSignedAcceptsOneLeadingMinusAndNoPlus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		micros int64
		err    error
	}{
		{in: "0", micros: 0},
		{in: "12.5", micros: 12_500_000},
		{in: "-25", micros: -25_000_000},
		{in: "-25.00", micros: -25_000_000},
		{in: "-0.000001", micros: -1},
		{in: "-0", micros: 0},
		{in: "-0.00", micros: 0},
		{in: "-9223372036854.775807", micros: -math.MaxInt64},
		{in: "-9223372036854.775808", micros: math.MinInt64},

		{in: "-", err: money.ErrInvalidAmount},
		{in: "--1", err: money.ErrInvalidAmount},
		{in: "+1", err: money.ErrInvalidAmount},
		{in: "- 1", err: money.ErrInvalidAmount},
		{in: "1-", err: money.ErrInvalidAmount},
		{in: "-.5", err: money.ErrInvalidAmount},
		{in: "-01", err: money.ErrInvalidAmount},
		{in: "-1e3", err: money.ErrInvalidAmount},
		{in: "-1.1234567", err: money.ErrTooManyDecimals},
		{in: "-9223372036854.775809", err: money.ErrOverflow},
		{in: "9223372036854.775808", err: money.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := money.ParseSigned(tt.in)
			checkParse(t, tt.in, got, err, tt.micros, tt.err)
		})
	}
}

func checkParse(t *testing.T, in string, got money.Amount, err error, micros int64, want error) {
	t.Helper()
	if want != nil {
		if !errors.Is(err, want) {
			t.Fatalf("parse %q: error %v, want %v", in, err, want)
		}
		var pe *money.ParseError
		if !errors.As(err, &pe) || pe.Input != in {
			t.Fatalf("parse %q: error %#v does not carry the input", in, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("parse %q: %v", in, err)
	}
	if got.Micros() != micros {
		t.Fatalf("parse %q = %d micros, want %d", in, got.Micros(), micros)
	}
}

func TestAParseErrorQuotesUpTo64CharactersOfTheInputAndSaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{in: "1.1234567", want: `money: parsing "1.1234567": more than 6 decimal places`},
		{in: "abc", want: `money: parsing "abc": invalid amount`},
		{in: strings.Repeat("9", 100), want: `money: parsing "` + strings.Repeat("9", 64) + `...": amount out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			_, err := money.Parse(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Parse(%q) error %q, want %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestStringShowsTwoToSixDecimalsWithoutExtraTrailingZeros(t *testing.T) {
	t.Parallel()
	tests := []struct {
		micros int64
		want   string
	}{
		{micros: 0, want: "0.00"},
		{micros: 1, want: "0.000001"},
		{micros: 10, want: "0.00001"},
		{micros: 10_000, want: "0.01"},
		{micros: 100_000, want: "0.10"},
		{micros: 123_456, want: "0.123456"},
		{micros: 1_000_000, want: "1.00"},
		{micros: 12_500_000, want: "12.50"},
		{micros: 12_340_000, want: "12.34"},
		{micros: 12_345_000, want: "12.345"},
		{micros: -25_000_000, want: "-25.00"},
		{micros: -1, want: "-0.000001"},
		{micros: -500_000, want: "-0.50"},
		{micros: 1_000_000_000_000, want: "1000000.00"},
		{micros: math.MaxInt64, want: "9223372036854.775807"},
		{micros: math.MinInt64, want: "-9223372036854.775808"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := money.FromMicros(tt.micros).String(); got != tt.want {
				t.Fatalf("FromMicros(%d).String() = %q, want %q", tt.micros, got, tt.want)
			}
		})
	}
}

func TestTheZeroValueIsTheAmountZero(t *testing.T) {
	t.Parallel()
	var a money.Amount
	if !a.IsZero() || a.String() != "0.00" || a.Micros() != 0 || a != money.MustParse("0") {
		t.Fatalf("zero value is %q (%d micros)", a, a.Micros())
	}
}

func TestMustParseTakesSignedInputAndPanicsOnAnError(t *testing.T) {
	t.Parallel()
	if got := money.MustParse("-1.5"); got.Micros() != -1_500_000 {
		t.Fatalf("MustParse(-1.5) = %d micros", got.Micros())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustParse of invalid input did not panic")
		}
	}()
	money.MustParse("1.1234567")
}
