package domain

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Delivery statuses (SPEC 3.4).
const (
	StatusPending = "PENDING"
	StatusSuccess = "SUCCESS"
	StatusFailed  = "FAILED"
)

// MaxResponseChars is how much of a receiver's answer the log keeps (SPEC 8).
const MaxResponseChars = 1000

// MaxResponseRead is how many bytes of an answer are read: enough for MaxResponseChars
// characters of up to 4 bytes each, and no more, whatever the receiver sends.
const MaxResponseRead = 4 * MaxResponseChars

// Outcome is the result of one attempt.
type Outcome struct {
	// StatusCode is the receiver's HTTP status, 0 when none arrived.
	StatusCode int
	// Body is the start of the receiver's answer (ResponseSnippet), "" when none.
	Body string
	// Error says why the attempt failed without an answer, or why the answer is a failure
	// ("" for a 2xx).
	Error string
}

// Succeeded reports whether the attempt delivered the event: a 2xx answer in time (SPEC 6.1).
func (o Outcome) Succeeded() bool {
	return o.StatusCode >= 200 && o.StatusCode < 300 && o.Error == ""
}

// ResponseSnippet returns the first MaxResponseChars characters of a (possibly cut) answer.
// Invalid UTF-8, including a character cut by the read limit, becomes U+FFFD, and NUL
// characters (which PostgreSQL text refuses) are dropped, so the result is always valid text
// cut on a character boundary.
func ResponseSnippet(raw []byte) string {
	// A multi-byte character cut by the read limit is not the receiver's fault: drop it.
	if len(raw) >= MaxResponseRead {
		if i := lastStart(raw); !utf8.FullRune(raw[i:]) {
			raw = raw[:i]
		}
	}
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	n := 0
	for i := range s {
		if n == MaxResponseChars {
			return s[:i]
		}
		n++
	}
	return s
}

// lastStart returns the index of the first byte of the last (possibly incomplete) character.
func lastStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b)
}

// Attempted is the result of an attempt to record.
type Attempted struct {
	Outcome Outcome
	Status  string
	At      time.Time
	// Next is when the next automatic attempt is due; nil for none.
	Next *time.Time
}
