// Package adminapi is payplat-ctl's client of the gateway's admin API (/api/v1/admin),
// authenticated with the ADMIN_TOKEN: the typed client generated from api/openapi.yaml
// (package api/client) with the retries an operator's command wants.
package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/payplat/platform/api/client"
)

// Client calls the admin API of one gateway.
type Client struct {
	api *client.ClientWithResponses
	// err is why the client could not be built (a malformed base URL); every call returns it.
	err error
	// retryWait is the pause before retry n (1-based) is retryWait*n.
	retryWait time.Duration
}

// New returns a client of the gateway at baseURL (for example http://127.0.0.1:8080).
func New(baseURL, token string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 30 * time.Second}
	}
	api, err := client.NewClientWithResponses(strings.TrimRight(baseURL, "/"), client.WithHTTPClient(httpClient),
		client.WithBearer(token))
	return &Client{api: api, err: err, retryWait: 500 * time.Millisecond}
}

// Error is an error answered by the gateway, in the format of DESIGN §5.
type Error struct {
	Status    int
	Code      string
	Message   string
	Field     string
	RequestID string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
	if e.Field != "" {
		msg += " [field " + e.Field + "]"
	}
	if e.RequestID != "" {
		msg += " (request id " + e.RequestID + ")"
	}
	return msg
}

// failure turns a generated call's outcome into nil, *Error, or a transport error.
func failure(r client.Response, err error) error {
	if err != nil {
		return fmt.Errorf("calling gateway: %w", err)
	}
	var apiErr *client.APIError
	if err := client.Failure(r, nil); errors.As(err, &apiErr) {
		return &Error{Status: apiErr.Status, Code: apiErr.Code, Message: apiErr.Message, Field: apiErr.Field,
			RequestID: apiErr.RequestID}
	} else if err != nil {
		return err
	}
	return nil
}

// retryable reports whether a POST with an Idempotency-Key may be sent again after err: the
// gateway stores no 5xx response, and a request still in flight finishes on its own.
func retryable(err error) bool {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.Status >= 500 || apiErr.Code == "IDEMPOTENCY_KEY_IN_PROGRESS"
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// do runs call once, or up to three times when idempotencyKey makes that safe (network errors
// and 5xx are retried).
func (c *Client) do(ctx context.Context, idempotencyKey string, call func() error) error {
	if c.err != nil {
		return c.err
	}
	attempts := 1
	if idempotencyKey != "" {
		attempts = 3
	}
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		if err = call(); err == nil || !retryable(err) {
			return err
		}
		if attempt < attempts {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(c.retryWait * time.Duration(attempt)):
			}
		}
	}
	return err
}

// optional returns a pointer to s, or nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
