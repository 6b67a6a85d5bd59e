package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Client calls the webhook-dispatcher.
type Client struct {
	nc *nats.Conn
}

// NewClient returns a client on nc.
func NewClient(nc *nats.Conn) *Client { return &Client{nc: nc} }

// Configure changes a company's webhook endpoint.
func (c *Client) Configure(ctx context.Context, req ConfigRequest) (ConfigReply, error) {
	var r ConfigReply
	return r, c.call(ctx, EndpointConfig, ConfigTimeout, req, &r)
}

// Retry attempts one of a company's deliveries now and returns the updated log entry.
func (c *Client) Retry(ctx context.Context, req RetryRequest) (LogEntry, error) {
	var e LogEntry
	return e, c.call(ctx, EndpointRetry, AttemptTimeout, req, &e)
}

// RunCron has the dispatcher process the due retries once.
func (c *Client) RunCron(ctx context.Context, req CronRequest) (CronReply, error) {
	var r CronReply
	return r, c.call(ctx, EndpointCron, AttemptTimeout, req, &r)
}

// call sends req to endpoint, waiting at most timeout, and decodes the reply into out. Error
// replies come back as *Error; no responder, a timeout or a closed connection as *Error with
// CodeUnavailable.
func (c *Client) call(ctx context.Context, endpoint string, timeout time.Duration, req, out any) error {
	subject := Subject(endpoint)
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reply, err := c.nc.RequestWithContext(ctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrConnectionClosed):
		return &Error{Code: CodeUnavailable, Message: fmt.Sprintf("%s: %v", subject, err)}
	case err != nil:
		return fmt.Errorf("%s: %w", subject, err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		e := &Error{}
		if json.Unmarshal(reply.Data, e) != nil {
			e = &Error{Message: reply.Header.Get(micro.ErrorHeader)}
		}
		e.Code = code
		return e
	}
	if err := json.Unmarshal(reply.Data, out); err != nil {
		return fmt.Errorf("%s: decoding reply: %w", subject, err)
	}
	return nil
}
