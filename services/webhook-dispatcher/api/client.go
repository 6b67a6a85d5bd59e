package api

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/natsx"
)

// Client calls the webhook-dispatcher.
type Client struct {
	nc *nats.Conn
}

// NewClient returns a client on nc.
func NewClient(nc *nats.Conn) *Client { return &Client{nc: nc} }

// Configure changes a company's webhook endpoint.
func (c *Client) Configure(ctx context.Context, req ConfigRequest) (ConfigReply, error) {
	return call[ConfigReply](ctx, c, EndpointConfig, ConfigTimeout, req)
}

// Retry attempts one of a company's deliveries now and returns the updated log entry.
func (c *Client) Retry(ctx context.Context, req RetryRequest) (LogEntry, error) {
	return call[LogEntry](ctx, c, EndpointRetry, AttemptTimeout, req)
}

// RunCron has the dispatcher process the due retries once.
func (c *Client) RunCron(ctx context.Context, req CronRequest) (CronReply, error) {
	return call[CronReply](ctx, c, EndpointCron, AttemptTimeout, req)
}

// call sends req to endpoint, waiting at most timeout, and returns the reply decoded as Out.
// Error replies come back as *Error; no responder, a timeout or a closed connection as *Error
// with CodeServiceUnavailable.
func call[Out any](ctx context.Context, c *Client, endpoint string, timeout time.Duration, req any) (Out, error) {
	return natsx.Call[Out](ctx, c.nc, nats.NewMsg(Subject(endpoint)), timeout, req)
}
