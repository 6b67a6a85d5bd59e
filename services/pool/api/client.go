package api

import (
	"context"

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
	return natsx.Call(ctx, c.nc, nats.NewMsg(subject), Timeout, req, out)
}
