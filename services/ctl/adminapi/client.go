// Package adminapi is a small client of the gateway's admin API (/api/v1/admin), authenticated
// with the ADMIN_TOKEN.
package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls the admin API of one gateway.
type Client struct {
	baseURL string
	token   string
	http    *http.Client
	// retryWait is the pause before retry n (1-based) is retryWait*n.
	retryWait time.Duration
}

// New returns a client of the gateway at baseURL (for example http://127.0.0.1:8080).
func New(baseURL, token string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), token: token, http: httpClient,
		retryWait: 500 * time.Millisecond}
}

// Error is an error answered by the gateway, in the format of DESIGN §5.
type Error struct {
	Status    int
	Code      string `json:"code"`
	Message   string `json:"message"`
	Field     string `json:"field"`
	RequestID string `json:"request_id"`
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

// retryable reports whether a POST with an Idempotency-Key may be sent again after err: the
// gateway stores no 5xx response, and a request still in flight finishes on its own.
func retryable(err error) bool {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.Status >= 500 || apiErr.Code == "IDEMPOTENCY_KEY_IN_PROGRESS"
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// do sends a request and decodes a 2xx JSON answer into out. POSTs carry idempotencyKey and
// are retried on network errors and 5xx, which the key makes safe.
func (c *Client) do(ctx context.Context, method, path, idempotencyKey string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	attempts := 1
	if idempotencyKey != "" {
		attempts = 3
	}
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		if err = c.once(ctx, method, path, idempotencyKey, body, out); err == nil || !retryable(err) {
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

func (c *Client) once(ctx context.Context, method, path, idempotencyKey string, body []byte, out any) error {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, reader)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("calling gateway: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reading gateway answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		return decodeError(resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding gateway answer: %w", err)
	}
	return nil
}

func decodeError(status int, data []byte) error {
	var body struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil || body.Error == nil {
		return &Error{Status: status, Code: http.StatusText(status), Message: strings.TrimSpace(string(data))}
	}
	body.Error.Status = status
	return body.Error
}
