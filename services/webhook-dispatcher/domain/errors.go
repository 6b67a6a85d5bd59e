package domain

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Errors of the webhook use cases. The request-reply port turns each into an error code the
// gateway maps to an HTTP status.
var (
	// ErrNotFound means the delivery or endpoint does not exist for this company and environment.
	ErrNotFound = errors.New("not found")
	// ErrInFlight means an attempt of the delivery is under way; try again once it ends.
	ErrInFlight = errors.New("an attempt of this delivery is in flight")
	// ErrBlockedAddress is the dial-time refusal of a private, loopback, link-local or other
	// non-public address (SSRF guard).
	ErrBlockedAddress = errors.New("blocked address")
	// ErrRateLimited means the company's manual retries are over their rate (RateLimitedError
	// says when the next is accepted).
	ErrRateLimited = errors.New("too many manual retries")
	// ErrPartitionLost means a partition of an Advance is no longer leased to its member: another
	// dispatcher may be reading it, so the batch must not be applied.
	ErrPartitionLost = errors.New("partition lease lost")
)

// RateLimitedError refuses a manual retry over the company's rate; it matches ErrRateLimited.
type RateLimitedError struct {
	// RetryAfter is how long until the next manual retry is accepted.
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("too many manual retries for this company: retry after %d s", e.Seconds())
}

// Seconds is RetryAfter in whole seconds, rounded up (at least 1).
func (e *RateLimitedError) Seconds() int {
	return max(int(math.Ceil(e.RetryAfter.Seconds())), 1)
}

// Is makes errors.Is(err, ErrRateLimited) match.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }
