package domain

import (
	"strconv"
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

// The delivery log's error messages, which partners read. They are few and fixed on purpose:
// a log that told a refused connection from an unknown name, a filtered port or a refused
// address, or that showed the addresses a name resolved to, would let a partner probe networks
// and internal names through the dispatcher (a port scanner and a DNS oracle). What actually
// happened goes to the service log only (Outcome.Detail).
const (
	// FailConnect: no connection (unknown name, refused, unreachable, or an address the SSRF
	// guard refuses).
	FailConnect = "could not connect"
	// FailTimeout: no answer within WEBHOOK_TIMEOUT (connecting, TLS or the answer itself).
	FailTimeout = "timed out"
	// FailTLS: the TLS handshake failed (untrusted or wrong certificate, protocol error).
	FailTLS = "TLS error"
	// FailResponse: connected, but no valid HTTP answer (connection closed or reset, malformed
	// answer, headers over the limit).
	FailResponse = "no valid HTTP response"
	// FailURL: the endpoint URL is not allowed (now): scheme or port refused.
	FailURL = "endpoint URL not allowed"
	// FailDisabled: the endpoint is disabled or has no URL.
	FailDisabled = "webhook endpoint is disabled or has no url"
	// FailSecret: the signing secret cannot be opened (WEBHOOK_SECRET_KEY changed).
	FailSecret = "signing secret unavailable"
	// FailSigning: the request could not be signed.
	FailSigning = "signing failed"
	// FailCancelled: the dispatcher stopped the attempt.
	FailCancelled = "attempt cancelled"
)

// FailHTTP is the error message of a non-2xx answer: "HTTP 503", and for a 3xx the reminder
// that redirects are not followed.
func FailHTTP(status int) string {
	msg := "HTTP " + strconv.Itoa(status)
	if status >= 300 && status < 400 {
		msg += " (redirects are not followed)"
	}
	return msg
}

// Outcome is the result of one attempt.
type Outcome struct {
	// StatusCode is the receiver's HTTP status, 0 when none arrived.
	StatusCode int
	// Body is the start of the receiver's answer (ResponseSnippet), "" when none.
	Body string
	// Error says why the attempt failed without an answer, or why the answer is a failure
	// ("" for a 2xx): one of the Fail messages, or FailHTTP. Partners read it.
	Error string
	// Detail is what the service log gets about a failure beyond Error (the underlying error,
	// with addresses). It is never stored in the delivery log.
	Detail string
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
