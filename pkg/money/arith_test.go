package money_test

import (
	"errors"
	"math"
	"testing"

	"github.com/payplat/platform/pkg/money"
)

var (
	maxAmount = money.FromMicros(math.MaxInt64)
	minAmount = money.FromMicros(math.MinInt64)
)

func TestAddSumsExactlyAndRefusesOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		a, b    money.Amount
		want    money.Amount
		wantErr bool
	}{
		{name: "small", a: money.MustParse("12.50"), b: money.MustParse("0.000001"), want: money.MustParse("12.500001")},
		{name: "negative", a: money.MustParse("10"), b: money.MustParse("-25"), want: money.MustParse("-15")},
		{name: "zero", a: money.Amount{}, b: money.Amount{}, want: money.Amount{}},
		{name: "to max", a: money.FromMicros(math.MaxInt64 - 1), b: money.FromMicros(1), want: maxAmount},
		{name: "to min", a: money.FromMicros(math.MinInt64 + 1), b: money.FromMicros(-1), want: minAmount},
		{name: "max plus min", a: maxAmount, b: minAmount, want: money.FromMicros(-1)},
		{name: "overflow up", a: maxAmount, b: money.FromMicros(1), wantErr: true},
		{name: "overflow down", a: minAmount, b: money.FromMicros(-1), wantErr: true},
		{name: "max plus max", a: maxAmount, b: maxAmount, wantErr: true},
		{name: "min plus min", a: minAmount, b: minAmount, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.Add(tt.b)
			checkArith(t, "Add", got, err, tt.want, tt.wantErr)
		})
	}
}

func TestSubSubtractsExactlyAndRefusesOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		a, b    money.Amount
		want    money.Amount
		wantErr bool
	}{
		{name: "small", a: money.MustParse("12.50"), b: money.MustParse("0.50"), want: money.MustParse("12")},
		{name: "below zero", a: money.MustParse("10"), b: money.MustParse("25"), want: money.MustParse("-15")},
		{name: "minus negative", a: money.MustParse("10"), b: money.MustParse("-25"), want: money.MustParse("35")},
		{name: "to min", a: money.FromMicros(math.MinInt64 + 1), b: money.FromMicros(1), want: minAmount},
		{name: "zero minus max", a: money.Amount{}, b: maxAmount, want: money.FromMicros(-math.MaxInt64)},
		{name: "min minus min", a: minAmount, b: minAmount, want: money.Amount{}},
		{name: "overflow down", a: minAmount, b: money.FromMicros(1), wantErr: true},
		{name: "overflow up", a: maxAmount, b: money.FromMicros(-1), wantErr: true},
		{name: "zero minus min", a: money.Amount{}, b: minAmount, wantErr: true},
		{name: "max minus min", a: maxAmount, b: minAmount, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.Sub(tt.b)
			checkArith(t, "Sub", got, err, tt.want, tt.wantErr)
		})
	}
}

func TestNegFlipsTheSignAndRefusesTheSmallestAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		a       money.Amount
		want    money.Amount
		wantErr bool
	}{
		{name: "positive", a: money.MustParse("25"), want: money.MustParse("-25")},
		{name: "negative", a: money.MustParse("-0.000001"), want: money.MustParse("0.000001")},
		{name: "zero", a: money.Amount{}, want: money.Amount{}},
		{name: "max", a: maxAmount, want: money.FromMicros(-math.MaxInt64)},
		{name: "min", a: minAmount, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.Neg()
			checkArith(t, "Neg", got, err, tt.want, tt.wantErr)
		})
	}
}

func checkArith(t *testing.T, op string, got money.Amount, err error, want money.Amount, wantErr bool) {
	t.Helper()
	if wantErr {
		if !errors.Is(err, money.ErrOverflow) {
			t.Fatalf("%s = %s, %v; want ErrOverflow", op, got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("%s = %s, %v; want %s", op, got, err, want)
	}
}

func TestAmountsCompareByValueAndReportTheirSign(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b                     string
		cmp                      int
		zero, negative, positive bool // of a
	}{
		{a: "0", b: "0", cmp: 0, zero: true},
		{a: "1", b: "0.999999", cmp: 1, positive: true},
		{a: "0.999999", b: "1", cmp: -1, positive: true},
		{a: "-1", b: "0", cmp: -1, negative: true},
		{a: "-1", b: "-2", cmp: 1, negative: true},
		{a: "12.5", b: "12.500000", cmp: 0, positive: true},
		{a: "-9223372036854.775808", b: "9223372036854.775807", cmp: -1, negative: true},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			t.Parallel()
			a, b := money.MustParse(tt.a), money.MustParse(tt.b)
			if got := a.Cmp(b); got != tt.cmp {
				t.Errorf("Cmp = %d, want %d", got, tt.cmp)
			}
			if got := b.Cmp(a); got != -tt.cmp {
				t.Errorf("reverse Cmp = %d, want %d", got, -tt.cmp)
			}
			if a.IsZero() != tt.zero || a.IsNegative() != tt.negative || a.IsPositive() != tt.positive {
				t.Errorf("IsZero/IsNegative/IsPositive = %v/%v/%v, want %v/%v/%v",
					a.IsZero(), a.IsNegative(), a.IsPositive(), tt.zero, tt.negative, tt.positive)
			}
		})
	}
}
