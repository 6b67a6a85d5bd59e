package money

import (
	"errors"
	"strconv"
)

// Sentinel errors, matched with errors.Is. Parse errors arrive wrapped in a *ParseError that
// names the offending input, so an HTTP layer can say exactly what is wrong with a field.
var (
	// ErrInvalidAmount reports text that is not a plain decimal amount: empty, a sign where
	// none belongs, an exponent, spaces, a missing digit around the point, non-canonical
	// leading zeros, or anything that is not a digit; also a JSON value that is not a string.
	ErrInvalidAmount = errors.New("invalid amount")
	// ErrTooManyDecimals reports an amount with more than 6 decimal places, finer than one
	// micro-USDC.
	ErrTooManyDecimals = errors.New("more than 6 decimal places")
	// ErrOverflow reports an amount, or the result of arithmetic, outside the int64 range of
	// micro-USDC (about ±9.2 trillion USDC).
	ErrOverflow = errors.New("amount out of range")
	// ErrNullAmount reports a SQL NULL scanned into an Amount; scan nullable columns into
	// sql.Null[Amount] or *Amount instead.
	ErrNullAmount = errors.New("null amount")
)

// maxQuotedInput bounds how much of a rejected input an error message repeats, so a hostile
// megabyte-long value does not end up in logs and responses.
const maxQuotedInput = 64

// ParseError is the error returned by Parse, ParseSigned and UnmarshalJSON. It wraps one of
// the sentinel errors (ErrInvalidAmount, ErrTooManyDecimals, ErrOverflow).
type ParseError struct {
	// Input is the rejected text, in full.
	Input string
	// Err is the sentinel error that says why it was rejected.
	Err error
}

// Error returns a message such as `money: parsing "1.1234567": more than 6 decimal places`.
// Long inputs are shortened in the message (Input keeps them whole).
func (e *ParseError) Error() string {
	in := e.Input
	if len(in) > maxQuotedInput {
		in = in[:maxQuotedInput] + "..."
	}
	return "money: parsing " + strconv.Quote(in) + ": " + e.Err.Error()
}

// Unwrap returns the sentinel error, for errors.Is.
func (e *ParseError) Unwrap() error { return e.Err }

func parseError(s string, err error) error {
	return &ParseError{Input: s, Err: err}
}
