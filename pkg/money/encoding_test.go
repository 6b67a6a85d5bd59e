package money_test

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/payplat/platform/pkg/money"
)

// Compile-time checks that Amount plugs into database/sql and encoding/json.
var (
	_ driver.Valuer    = money.Amount{}
	_ sql.Scanner      = (*money.Amount)(nil)
	_ json.Marshaler   = money.Amount{}
	_ json.Unmarshaler = (*money.Amount)(nil)
)

func TestAnAmountMarshalsToAJSONStringOfItsDecimalText(t *testing.T) {
	t.Parallel()
	type payment struct {
		Amount money.Amount  `json:"amount"`
		Fee    *money.Amount `json:"fee,omitempty"`
	}
	fee := money.MustParse("0.123456")
	tests := []struct {
		name string
		in   payment
		want string
	}{
		{name: "zero", in: payment{}, want: `{"amount":"0.00"}`},
		{name: "two decimals", in: payment{Amount: money.MustParse("12.5")}, want: `{"amount":"12.50"}`},
		{name: "negative", in: payment{Amount: money.MustParse("-25")}, want: `{"amount":"-25.00"}`},
		{name: "pointer", in: payment{Amount: money.MustParse("1000000"), Fee: &fee}, want: `{"amount":"1000000.00","fee":"0.123456"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.in)
			if err != nil || string(got) != tt.want {
				t.Fatalf("Marshal = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestUnmarshalJSONAcceptsOnlyAStringHoldingASignedAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		micros int64
		err    error
	}{
		{in: `"12.50"`, micros: 12_500_000},
		{in: `"0"`, micros: 0},
		{in: `"-25.00"`, micros: -25_000_000},
		{in: `"0.000001"`, micros: 1},
		{in: `"\u0031.5"`, micros: 1_500_000}, // JSON escapes are decoded first
		{in: `"-9223372036854.775808"`, micros: math.MinInt64},

		{in: `12.5`, err: money.ErrInvalidAmount},
		{in: `0`, err: money.ErrInvalidAmount},
		{in: `null`, err: money.ErrInvalidAmount},
		{in: `true`, err: money.ErrInvalidAmount},
		{in: `{}`, err: money.ErrInvalidAmount},
		{in: `[]`, err: money.ErrInvalidAmount},
		{in: `""`, err: money.ErrInvalidAmount},
		{in: `" 1"`, err: money.ErrInvalidAmount},
		{in: `"+1"`, err: money.ErrInvalidAmount},
		{in: `"1e3"`, err: money.ErrInvalidAmount},
		{in: `"1.1234567"`, err: money.ErrTooManyDecimals},
		{in: `"9223372036854.775808"`, err: money.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var got struct {
				Amount money.Amount `json:"amount"`
			}
			err := json.Unmarshal([]byte(`{"amount":`+tt.in+`}`), &got)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Unmarshal(%s): error %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got.Amount.Micros() != tt.micros {
				t.Fatalf("Unmarshal(%s) = %d micros, %v; want %d", tt.in, got.Amount.Micros(), err, tt.micros)
			}
		})
	}
}

func TestJSONNullUnmarshalsIntoANilAmountPointer(t *testing.T) {
	t.Parallel()
	var got struct {
		Fee *money.Amount `json:"fee"`
	}
	if err := json.Unmarshal([]byte(`{"fee":null}`), &got); err != nil || got.Fee != nil {
		t.Fatalf("null into *Amount = %v, %v; want nil, nil", got.Fee, err)
	}
}

func TestValueStoresTheAmountAsInt64Micros(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   money.Amount
		want int64
	}{
		{in: money.Amount{}, want: 0},
		{in: money.MustParse("12.50"), want: 12_500_000},
		{in: money.MustParse("-0.000001"), want: -1},
		{in: money.FromMicros(math.MinInt64), want: math.MinInt64},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			t.Parallel()
			got, err := tt.in.Value()
			if err != nil || got != driver.Value(tt.want) {
				t.Fatalf("Value() = %#v, %v; want int64 %d", got, err, tt.want)
			}
		})
	}
}

func TestScanReadsBigintMicrosAndNumericTextAndRefusesTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     any
		micros  int64
		err     error
		wantErr bool
	}{
		{name: "bigint micros", src: int64(12_500_000), micros: 12_500_000},
		{name: "bigint negative", src: int64(-1), micros: -1},
		{name: "numeric string", src: "12.500000", micros: 12_500_000},
		{name: "numeric bytes", src: []byte("-25.000000"), micros: -25_000_000},
		{name: "numeric integer", src: "7", micros: 7_000_000},
		{name: "numeric zero", src: "0.000000", micros: 0},
		{name: "numeric too precise", src: "1.1234567", err: money.ErrTooManyDecimals},
		{name: "numeric too large", src: "99999999999999999999.000000", err: money.ErrOverflow},
		{name: "numeric NaN", src: "NaN", err: money.ErrInvalidAmount},
		{name: "null", src: nil, err: money.ErrNullAmount},
		{name: "float", src: float64(12.5), wantErr: true},
		{name: "bool", src: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := money.MustParse("1") // Scan must overwrite, not add
			err := got.Scan(tt.src)
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("Scan(%#v): error %v, want %v", tt.src, err, tt.err)
				}
			case tt.wantErr:
				if err == nil {
					t.Fatalf("Scan(%#v) = %s, want an error", tt.src, got)
				}
			default:
				if err != nil || got.Micros() != tt.micros {
					t.Fatalf("Scan(%#v) = %d micros, %v; want %d", tt.src, got.Micros(), err, tt.micros)
				}
			}
		})
	}
}

func TestSQLNullOfAmountScansBothNullAndAValue(t *testing.T) {
	t.Parallel()
	var n sql.Null[money.Amount]
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Fatalf("sql.Null[Amount].Scan(nil) = %+v, %v", n, err)
	}
	if err := n.Scan(int64(5)); err != nil || !n.Valid || n.V.Micros() != 5 {
		t.Fatalf("sql.Null[Amount].Scan(5) = %+v, %v", n, err)
	}
}
