package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/cenkalti/backoff/v5"
)

// consumerMiddleware builds the handler middleware of one consumer.
type consumerMiddleware struct {
	spec    ConsumerSpec
	cfg     RouterConfig
	dl      *DeadLetterer
	metrics *handlerMetrics
	log     *slog.Logger
}

// chain returns the middlewares of a consumer's handler, outermost first (the router adds
// CorrelationID around all of them):
//
//	settle      acks, dead-letters (permanent errors) or nacks (transient), and measures
//	recoverer   a panic becomes a permanent ErrHandlerPanicked
//	exhausted   a transient failure on the last delivery allowed becomes permanent
//	Retry       bounded in-process retries of transient errors
//	permanent   stops Retry at once on a permanent error
//	Timeout     bounds each attempt
func (c consumerMiddleware) chain() []message.HandlerMiddleware {
	retry := middleware.Retry{
		MaxRetries:          c.cfg.Retry.MaxRetries,
		InitialInterval:     c.cfg.Retry.InitialInterval,
		MaxInterval:         c.cfg.Retry.MaxInterval,
		Multiplier:          c.cfg.Retry.Multiplier,
		RandomizationFactor: retryJitter,
		// Each attempt gets a fresh Timeout context; without the reset it would inherit the
		// previous attempt's, already cancelled.
		ResetContextOnRetry: true,
	}
	return []message.HandlerMiddleware{
		c.settle, c.recoverer, c.exhausted, retry.Middleware, stopRetryOnPermanent, middleware.Timeout(c.cfg.HandlerTimeout),
	}
}

// settle decides the fate of a message once the handler has given its last word: nil acks;
// a permanent error dead-letters then acks, so the messages behind it flow; a transient
// error (or a failed dead letter) nacks, and JetStream redelivers after the consumer's
// AckWait or BackOff.
func (c consumerMiddleware) settle(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		start := time.Now()
		out, err := h(msg)
		outcome := OutcomeAcked
		switch {
		case err == nil:
		case IsPermanent(err):
			if dlErr := c.deadLetter(msg, err); dlErr != nil {
				err, outcome = errors.Join(err, dlErr), OutcomeNacked
				break
			}
			out, err, outcome = nil, nil, OutcomeDeadLettered
		default:
			outcome = OutcomeNacked
		}
		c.metrics.duration.WithLabelValues(c.spec.Durable, outcome).Observe(time.Since(start).Seconds())
		return out, err
	}
}

func (c consumerMiddleware) deadLetter(msg *message.Message, reason error) error {
	// The message context ends when the subscriber stops waiting; the dead letter is worth
	// finishing anyway (it is de-duplicated if the message comes back).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(msg.Context()), c.cfg.DeadLetterTimeout)
	defer cancel()
	dl := deadLetterFromMessage(c.spec.Durable, msg, reason)
	c.log.Warn("dead-lettering message", "consumer", c.spec.Durable, "subject", dl.Subject,
		"msg_id", dl.originalMsgID(), "reason_kind", ReasonKind(reason), "error", reason)
	return c.dl.Send(ctx, dl)
}

// recoverer is Watermill's Recoverer with the panic made permanent and its stack logged
// rather than copied into the dead letter.
func (c consumerMiddleware) recoverer(h message.HandlerFunc) message.HandlerFunc {
	recovering := middleware.Recoverer(h)
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := recovering(msg)
		var p middleware.RecoveredPanicError
		if errors.As(err, &p) {
			c.log.Error("handler panicked", "consumer", c.spec.Durable, "msg_uuid", msg.UUID,
				"panic", fmt.Sprint(p.V), "stack", p.Stacktrace)
			return out, Permanent(fmt.Errorf("%w: %v", ErrHandlerPanicked, p.V))
		}
		return out, err
	}
}

// exhausted makes a transient failure permanent on the last delivery that the consumer's
// MaxDeliver allows: JetStream would otherwise stop delivering it without a trace.
func (c consumerMiddleware) exhausted(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err == nil || IsPermanent(err) || c.spec.MaxDeliver <= 0 {
			return out, err
		}
		delivered, _ := strconv.Atoi(msg.Metadata.Get(MetadataDelivered))
		if delivered >= c.spec.MaxDeliver {
			return out, Permanent(fmt.Errorf("%w after %d deliveries: %w", ErrDeliveriesExhausted, delivered, err))
		}
		return out, err
	}
}

// stopRetryOnPermanent ends Watermill's Retry at once on a permanent error. (Retry's own
// ShouldRetry hook would do, but calling it advances the backoff, which doubles the waits.)
func stopRetryOnPermanent(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err != nil && IsPermanent(err) {
			return out, backoff.Permanent(err)
		}
		return out, err
	}
}
