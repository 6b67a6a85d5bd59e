package money

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// MarshalJSON writes a as a JSON string in the canonical format, e.g. "12.50". A string, not
// a number, so that no JSON reader on the way turns it into a float.
func (a Amount) MarshalJSON() ([]byte, error) {
	s := a.String()
	buf := make([]byte, 0, len(s)+2)
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), nil
}

// UnmarshalJSON reads a JSON string with ParseSigned's rules, so a negative amount is
// accepted here and callers that need a positive one check IsPositive. JSON numbers, null and
// every other JSON value are rejected with ErrInvalidAmount: a number may already have passed
// through a float, and null is not an amount (decode optional fields into *Amount, which
// encoding/json sets to nil on null without calling this method).
func (a *Amount) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || data[0] != '"' {
		return parseError(string(data), ErrInvalidAmount)
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return parseError(string(data), ErrInvalidAmount)
	}
	v, err := ParseSigned(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// Value implements driver.Valuer: an Amount is written to the database as its micro-USDC
// count, an int64, so the column must be BIGINT holding micros. Do not bind an Amount directly
// to a NUMERIC(38,6) column: 12.50 would be stored as 12500000. For NUMERIC columns bind
// a.String() (exact decimal text) instead; reading NUMERIC back through Scan is fine.
func (a Amount) Value() (driver.Value, error) {
	return a.micros, nil
}

// Scan implements sql.Scanner. It accepts an int64 (a BIGINT column of micro-USDC, as Value
// writes it) and text (string or []byte, as a NUMERIC column arrives: decimal USDC such as
// "12.500000", read with ParseSigned's rules and never rounded). It rejects NULL with
// ErrNullAmount (scan nullable columns into sql.Null[Amount] or *Amount) and floats always.
func (a *Amount) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*a = Amount{micros: v}
		return nil
	case string:
		return a.scanText(v)
	case []byte:
		return a.scanText(string(v))
	case nil:
		return fmt.Errorf("money: scanning: %w", ErrNullAmount)
	default:
		return fmt.Errorf("money: scanning %T: unsupported type (want BIGINT micros or NUMERIC)", src)
	}
}

func (a *Amount) scanText(s string) error {
	v, err := ParseSigned(s)
	if err != nil {
		return fmt.Errorf("money: scanning: %w", err)
	}
	*a = v
	return nil
}
