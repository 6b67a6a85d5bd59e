package events

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A check is the rule of a field's value. fn returns why a non-empty value breaks it, or "";
// emptiness is handled by the field rule (required or optional) before. rule is how
// proto-events/README.md words it in the field tables (a test compares them).
type check struct {
	rule string
	fn   func(v string) string
}

// Size limits keep single fields from bloating the streams and the read tables.
const (
	maxTokenLen = 256
	maxTextLen  = 4096
)

// The checks of the contract.
var (
	// token: an id, address, hash or key.
	token = check{rule: "token", fn: tokenValue}
	// text: free human-readable text.
	text = check{rule: "text", fn: textValue}
	// timestamp: an RFC 3339 time, for example "2026-01-31T12:00:00Z".
	timestamp = check{rule: "RFC 3339 time", fn: timestampValue}
	// upperToken: an open set of upper-case values such as ledger entry types.
	upperToken = check{rule: "upper-case token", fn: upperTokenValue}
	// httpURL: an absolute http or https URL.
	httpURL = check{rule: "http(s) URL", fn: httpURLValue}
	// email: a bare address such as "ops@example.com", without display name.
	email = check{rule: "email address", fn: emailValue}
	// merchantName: at least 2 characters that are not all spaces (SPEC §4.2).
	merchantName = check{rule: "text, at least 2 characters", fn: merchantNameValue}
)

// amountRules words each sign of amount in the README.
var amountRules = map[sign]string{
	unsigned: "amount ≥ 0",
	positive: "amount > 0",
	signed:   "signed amount",
	negative: "amount < 0",
	balance:  "balance",
}

// amount returns the check of a USDC decimal string of the given sign.
func amount(want sign) check {
	return check{rule: amountRules[want], fn: func(v string) string { return checkAmount(v, want) }}
}

// oneOf returns the check of a field with a closed set of values.
func oneOf(values ...string) check {
	rule := "one of " + strings.Join(values, ", ")
	if len(values) == 1 {
		rule = values[0]
	}
	return check{rule: rule, fn: func(v string) string {
		if slices.Contains(values, v) {
			return ""
		}
		if len(values) == 1 {
			return fmt.Sprintf("%q must be %q", v, values[0])
		}
		return fmt.Sprintf("%q is not one of %s", v, strings.Join(values, ", "))
	}}
}

func tokenValue(v string) string {
	if len(v) > maxTokenLen {
		return fmt.Sprintf("is longer than %d bytes", maxTokenLen)
	}
	if hasSpaceOrControl(v) {
		return fmt.Sprintf("%q must not contain whitespace or control characters", v)
	}
	return ""
}

// hasSpaceOrControl reports whether v contains a rune that unicode.IsSpace or unicode.IsControl
// accepts. ASCII, which ids and hashes are made of, is checked bytewise (its spaces and controls
// are the bytes up to ' ' and DEL); the unicode tables are only consulted from the first
// non-ASCII byte on, as they dominated the validation profile.
func hasSpaceOrControl(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if b >= utf8.RuneSelf {
			return strings.IndexFunc(v[i:], func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
		}
		if b <= ' ' || b == 0x7f {
			return true
		}
	}
	return false
}

func textValue(v string) string {
	if len(v) > maxTextLen {
		return fmt.Sprintf("is longer than %d bytes", maxTextLen)
	}
	return storableText(v)
}

// storableText refuses what PostgreSQL's text type cannot hold: the NUL character (U+0000) and
// invalid UTF-8. Such an event would fail the consumer's insert on every redelivery; refused
// here, it goes to the dead letters with the reason instead. Token fields already
// refuse every control character.
func storableText(v string) string {
	if strings.IndexByte(v, 0) >= 0 {
		return "must not contain the NUL character (U+0000), which PostgreSQL text cannot store"
	}
	if !utf8.ValidString(v) {
		return "is not valid UTF-8"
	}
	return ""
}

// uuidValue: a UUID in canonical 8-4-4-4-12 form (hex digits of either case), not the nil UUID.
func uuidValue(v string) string {
	if !isUUID(v) {
		return fmt.Sprintf("%q is not a UUID (8-4-4-4-12 hex digits)", v)
	}
	if strings.Trim(v, "0-") == "" {
		return "must not be the nil UUID"
	}
	return ""
}

// isUUID reports whether v is 36 bytes of hex digits with hyphens at 8, 13, 18 and 23. It is
// checked by hand: a regular expression was a large part of Validate's cost in a rebuild.
func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := range len(v) {
		c := v[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func timestampValue(v string) string {
	if _, err := time.Parse(time.RFC3339, v); err != nil {
		return fmt.Sprintf("%q is not an RFC 3339 timestamp", v)
	}
	return ""
}

func upperTokenValue(v string) string {
	if len(v) > maxTokenLen || !isUpperToken(v) {
		return fmt.Sprintf("%q is not an upper-case token such as PAYMENT", v)
	}
	return ""
}

// isUpperToken reports whether v is an ASCII upper-case letter followed by upper-case letters,
// digits and underscores.
func isUpperToken(v string) bool {
	if v == "" || v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func httpURLValue(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not an absolute http(s) URL", v)
	}
	return textValue(v)
}

func emailValue(v string) string {
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v {
		return fmt.Sprintf("%q is not an email address", v)
	}
	return tokenValue(v)
}

func merchantNameValue(v string) string {
	if utf8.RuneCountInString(strings.TrimSpace(v)) < 2 {
		return fmt.Sprintf("%q is shorter than 2 characters", v)
	}
	return textValue(v)
}
