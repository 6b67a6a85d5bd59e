package health

import (
	"context"
	"errors"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// checkError is a check failure whose message is short and safe to show in /readyz, and whose
// cause, which may name hosts or users, is only logged.
type checkError struct {
	msg   string
	cause error
}

func (e *checkError) Error() string { return e.msg }
func (e *checkError) Unwrap() error { return e.cause }

func failure(msg string, cause error) error {
	return &checkError{msg: msg, cause: cause}
}

// natsFlushTimeout bounds the round trip of NATSCheck when its context has no deadline.
const natsFlushTimeout = DefaultCheckTimeout

// PostgresCheck checks that the database answers a ping. pinger is typically a *pgxpool.Pool
// or a *pgx.Conn.
func PostgresCheck(pinger interface{ Ping(context.Context) error }) Check {
	return func(ctx context.Context) error {
		if pinger == nil {
			return errors.New("no database")
		}
		if err := pinger.Ping(ctx); err != nil {
			if ctx.Err() != nil {
				return failure("database ping timed out", err)
			}
			return failure("database unreachable", err)
		}
		return nil
	}
}

// NATSCheck checks that nc is connected and that the server answers a round trip (a PING
// flushed within the check's deadline), which also catches a half-open connection.
func NATSCheck(nc *nats.Conn) Check {
	return func(ctx context.Context) error {
		if nc == nil {
			return errors.New("no nats connection")
		}
		if !nc.IsConnected() {
			return errors.New("nats " + strings.ToLower(nc.Status().String()))
		}
		if _, ok := ctx.Deadline(); !ok {
			// FlushWithContext refuses a context without a deadline.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, natsFlushTimeout)
			defer cancel()
		}
		if err := nc.FlushWithContext(ctx); err != nil {
			return failure("nats not answering", err)
		}
		return nil
	}
}

// StreamsCheck checks that every named JetStream stream exists, and names the missing ones
// ("missing streams: PAYMENTS, POOL").
func StreamsCheck(js jetstream.JetStream, names ...string) Check {
	names = append([]string(nil), names...)
	return func(ctx context.Context) error {
		if js == nil {
			return errors.New("no jetstream")
		}
		var missing []string
		for _, name := range names {
			_, err := js.Stream(ctx, name)
			switch {
			case errors.Is(err, jetstream.ErrStreamNotFound):
				missing = append(missing, name)
			case err != nil:
				return failure("jetstream unavailable", err)
			}
		}
		if len(missing) > 0 {
			return errors.New("missing streams: " + strings.Join(missing, ", "))
		}
		return nil
	}
}
