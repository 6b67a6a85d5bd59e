package natsx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// ErrUnavailable means that no service answered a request: none listens on its subject, none
// answered before the context ended, or the connection is closed or nil. The request may or may
// not have been carried out (none was sent without a connection).
var ErrUnavailable = errors.New("service unavailable")

// ReplyError is a reply carrying nats.go micro's error headers: the service refused or failed
// the request. Body is the reply's data, which a service may fill with a JSON error of its own.
type ReplyError struct {
	Code        string // micro.ErrorCodeHeader
	Description string // micro.ErrorHeader
	Body        []byte
}

func (e *ReplyError) Error() string { return e.Code + ": " + e.Description }

// RequestJSON sends msg with req's JSON as its data and decodes a successful reply into out.
// It returns an error wrapping ErrUnavailable when no service answered, and a *ReplyError for
// an error reply. The context bounds the wait.
func RequestJSON(ctx context.Context, nc *nats.Conn, msg *nats.Msg, req, out any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: encoding the request: %w", msg.Subject, err)
	}
	msg.Data = data
	reply, err := nc.RequestMsgWithContext(ctx, msg)
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, nats.ErrInvalidConnection):
		return fmt.Errorf("%s: %w: %v", msg.Subject, ErrUnavailable, err)
	case err != nil:
		return fmt.Errorf("%s: %w", msg.Subject, err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		return &ReplyError{Code: code, Description: reply.Header.Get(micro.ErrorHeader), Body: reply.Data}
	}
	if err := json.Unmarshal(reply.Data, out); err != nil {
		return fmt.Errorf("%s: decoding the reply: %w", msg.Subject, err)
	}
	return nil
}
