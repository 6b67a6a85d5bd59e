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
	return call[Balance](ctx, c, SubjectUpdateSettings, req)
}

// SimulateDeposit records a simulated deposit in a test pool.
func (c *Client) SimulateDeposit(ctx context.Context, req SimulateDepositRequest) (SimulateDepositReply, error) {
	return call[SimulateDepositReply](ctx, c, SubjectSimulateDeposit, req)
}

// call sends req to subject, waiting at most Timeout, and returns the reply decoded as Out.
// Error replies come back as *Error; no answer as *Error with CodeServiceUnavailable.
func call[Out any](ctx context.Context, c *Client, subject string, req any) (Out, error) {
	return natsx.Call[Out](ctx, c.nc, nats.NewMsg(subject), Timeout, req)
}
