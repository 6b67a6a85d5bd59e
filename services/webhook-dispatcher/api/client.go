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
// CodeServiceUnavailable.
func (c *Client) call(ctx context.Context, endpoint string, timeout time.Duration, req, out any) error {
	return natsx.Call(ctx, c.nc, nats.NewMsg(Subject(endpoint)), timeout, req, out)
}
