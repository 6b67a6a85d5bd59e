package eventstore

import (
	"errors"
	"fmt"
)

// ErrConcurrency is matched (errors.Is) by every *ConcurrencyError.
var ErrConcurrency = errors.New("stream version conflict")

// ErrDuplicateEvent reports an append of an event id the store already holds.
var ErrDuplicateEvent = errors.New("event id already appended")

// ErrInvalidEvent reports an event that cannot be appended as given.
var ErrInvalidEvent = errors.New("invalid event")

// ConcurrencyError reports that a stream was not at the version the append expected.
type ConcurrencyError struct {
	StreamID string
	Expected int64
	Actual   int64
}

func (e *ConcurrencyError) Error() string {
	return fmt.Sprintf("stream %s: expected version %d, found %d", e.StreamID, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrConcurrency) true.
func (e *ConcurrencyError) Is(target error) bool { return target == ErrConcurrency }
