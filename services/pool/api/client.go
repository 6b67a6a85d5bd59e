package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Client calls the pool service.
type Client struct {
	nc *nats.Conn
}

// NewClient returns a client on nc.
func NewClient(nc *nats.Conn) *Client { return &Client{nc: nc} }

// UpdateSettings changes a pool's settings and returns its balance after the change.
func (c *Client) UpdateSettings(ctx context.Context, req UpdateSettingsRequest) (Balance, error) {
	var b Balance
	return b, c.call(ctx, SubjectUpdateSettings, req, &b)
}

// SimulateDeposit records a simulated deposit in a test pool.
func (c *Client) SimulateDeposit(ctx context.Context, req SimulateDepositRequest) (SimulateDepositReply, error) {
	var d SimulateDepositReply
	return d, c.call(ctx, SubjectSimulateDeposit, req, &d)
}

// call sends req to subject, waiting at most Timeout, and decodes the reply into out. Error
// replies come back as *Error; no responder or a timeout as *Error with CodeServiceUnavailable.
func (c *Client) call(ctx context.Context, subject string, req, out any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	reply, err := c.nc.RequestWithContext(ctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return &Error{Code: CodeServiceUnavailable, Message: fmt.Sprintf("pool service: %v", err)}
	case err != nil:
		return fmt.Errorf("calling pool service %s: %w", subject, err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		e := &Error{}
		if json.Unmarshal(reply.Data, e) != nil || e.Code == "" {
			e = &Error{Code: code, Message: reply.Header.Get(micro.ErrorHeader)}
		}
		return e
	}
	if err := json.Unmarshal(reply.Data, out); err != nil {
		return fmt.Errorf("decoding pool service reply: %w", err)
	}
	return nil
}
