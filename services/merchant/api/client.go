package api

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/natsx"
)

// DefaultTimeout bounds a request when the context has no deadline.
const DefaultTimeout = 10 * time.Second

// Client calls the merchant service.
type Client struct {
	nc *nats.Conn
}

// NewClient returns a client on nc.
func NewClient(nc *nats.Conn) *Client { return &Client{nc: nc} }

// Create asks the merchant service to create a merchant with a new wallet; repeating req with
// the same MerchantID returns the merchant created the first time.
func (c *Client) Create(ctx context.Context, requestID string, req CreateRequest) (Merchant, error) {
	return call[Merchant](ctx, c, EndpointCreate, requestID, req)
}

// SetStatus changes a merchant's status for its company.
func (c *Client) SetStatus(ctx context.Context, requestID string, req SetStatusRequest) (Merchant, error) {
	return call[Merchant](ctx, c, EndpointSetStatus, requestID, req)
}

// AdminSetStatus changes any merchant's status for the platform.
func (c *Client) AdminSetStatus(ctx context.Context, requestID string, req SetStatusRequest) (Merchant, error) {
	return call[Merchant](ctx, c, EndpointAdminSetStatus, requestID, req)
}

// GetStatus returns a merchant's current status.
func (c *Client) GetStatus(ctx context.Context, requestID string, req GetStatusRequest) (StatusReply, error) {
	return call[StatusReply](ctx, c, EndpointGetStatus, requestID, req)
}

// call sends req to endpoint and returns the reply decoded as Out. Error replies come back as
// *Error; no responder, a timeout or a closed connection as *Error with CodeServiceUnavailable.
func call[Out any](ctx context.Context, c *Client, endpoint, requestID string, req any) (Out, error) {
	timeout := DefaultTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	msg := nats.NewMsg(Subject(endpoint))
	if requestID != "" {
		msg.Header.Set(HeaderRequestID, requestID)
	}
	return natsx.Call[Out](ctx, c.nc, msg, timeout, req)
}
