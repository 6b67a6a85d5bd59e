package bus

import (
	"fmt"
	"time"
)

// Defaults of RouterConfig and RetryConfig; doc.go explains how they fit together.
const (
	DefaultHandlerTimeout    = 5 * time.Second
	DefaultDeadLetterTimeout = 5 * time.Second
	DefaultAckTimeout        = 30 * time.Second
	DefaultCloseTimeout      = 30 * time.Second

	DefaultMaxRetries      = 3
	DefaultInitialInterval = 100 * time.Millisecond
	DefaultMaxInterval     = time.Second
	DefaultMultiplier      = 2.0

	// retryJitter spreads retries of many instances (±10% of each interval).
	retryJitter = 0.1
)

// RetryConfig is the in-process retry of a handler after a transient error: exponential
// intervals from InitialInterval, multiplied by Multiplier, capped at MaxInterval, ±10%.
// The zero value means the defaults: 3 retries after 100ms, 200ms and 400ms.
type RetryConfig struct {
	// MaxRetries is how many times a failed handler is called again; zero means
	// DefaultMaxRetries, negative means no retry.
	MaxRetries int
	// InitialInterval is the wait before the first retry; zero means DefaultInitialInterval.
	InitialInterval time.Duration
	// MaxInterval caps the wait between retries; zero means DefaultMaxInterval.
	MaxInterval time.Duration
	// Multiplier scales the wait after each retry; zero means DefaultMultiplier.
	Multiplier float64
}

func (r RetryConfig) withDefaults() RetryConfig {
	switch {
	case r.MaxRetries == 0:
		r.MaxRetries = DefaultMaxRetries
	case r.MaxRetries < 0:
		r.MaxRetries = 0
	}
	if r.InitialInterval <= 0 {
		r.InitialInterval = DefaultInitialInterval
	}
	if r.MaxInterval <= 0 {
		r.MaxInterval = DefaultMaxInterval
	}
	if r.Multiplier <= 0 {
		r.Multiplier = DefaultMultiplier
	}
	return r
}

// maxSleep is the longest total wait between the attempts of one message.
func (r RetryConfig) maxSleep() time.Duration {
	var total time.Duration
	interval := r.InitialInterval
	for range r.MaxRetries {
		total += time.Duration(float64(min(interval, r.MaxInterval)) * (1 + retryJitter))
		interval = time.Duration(float64(interval) * r.Multiplier)
	}
	return total
}

// retryBudget is the longest a message can stay in the Router before it is acked or nacked:
// every attempt running into HandlerTimeout, the waits between them, then a dead letter
// taking DeadLetterTimeout.
func (c RouterConfig) retryBudget() time.Duration {
	return time.Duration(c.Retry.MaxRetries+1)*c.HandlerTimeout + c.Retry.maxSleep() + c.DeadLetterTimeout
}

// checkTiming enforces retry budget < subscriber ack timeout < every server ack deadline of
// spec, so that a message is acked or nacked before the subscriber stops waiting for it, and
// the subscriber stops waiting before JetStream redelivers it to another instance.
func (c RouterConfig) checkTiming(spec ConsumerSpec) error {
	if budget := c.retryBudget(); budget >= c.AckTimeout {
		return fmt.Errorf("%w: %s: retry budget %v ((%d attempts x %v handler timeout) + %v waits + %v dead-letter timeout) must be below the ack timeout %v",
			ErrTimingBudget, spec.Durable, budget, c.Retry.MaxRetries+1, c.HandlerTimeout, c.Retry.maxSleep(), c.DeadLetterTimeout, c.AckTimeout)
	}
	if deadline := spec.minAckDeadline(); c.AckTimeout >= deadline {
		return fmt.Errorf("%w: %s: ack timeout %v must be below the consumer's ack wait %v (shortest of AckWait and BackOff)",
			ErrTimingBudget, spec.Durable, c.AckTimeout, deadline)
	}
	return nil
}
