package api

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/natsx"
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
// replies come back as *Error; no answer as *Error with CodeServiceUnavailable.
func (c *Client) call(ctx context.Context, subject string, req, out any) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	err := natsx.RequestJSON(ctx, c.nc, nats.NewMsg(subject), req, out)
	var r *natsx.ReplyError
	switch {
	case errors.Is(err, natsx.ErrUnavailable):
		return &Error{Code: CodeServiceUnavailable, Message: err.Error()}
	case errors.As(err, &r):
		// The service puts its own error, code included, in the body.
		e := &Error{}
		if json.Unmarshal(r.Body, e) != nil || e.Code == "" {
			e = &Error{Code: r.Code, Message: r.Description}
		}
		return e
	}
	return err
}
