// Package client is the typed Go client of the payplat partner API, generated from
// api/openapi.yaml by oapi-codegen (client.gen.go; `make generate` regenerates it), plus the few
// helpers below. A partner's first call:
//
//	c, err := client.NewClientWithResponses("https://api.payplat.example", client.WithAPIKey(key))
//	r, err := c.CreateMerchantWithResponse(ctx, nil, client.CreateMerchantJSONRequestBody{Name: "Corner Shop", Email: "shop@example.com"})
//	if err := client.Failure(r, err); err != nil { ... } // a *client.APIError for a 4xx/5xx
//	fmt.Println(r.JSON201.Merchant.Id, r.JSON201.Merchant.WalletAddress)
package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// WithAPIKey authenticates every request with a company's API key, in header x-api-key.
func WithAPIKey(key string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("x-api-key", key)
		return nil
	})
}

// WithBearer authenticates every request with Authorization: Bearer token: the platform's
// ADMIN_TOKEN, the CRON_SECRET, or an API key.
func WithBearer(token string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}

// WithIdempotencyKey sets the Idempotency-Key of one request (a request editor): POSTs made with
// it are safe to retry.
func WithIdempotencyKey(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Idempotency-Key", key)
		return nil
	}
}

// APIError is an error answer of the API (its Error body) with the HTTP status.
type APIError struct {
	Status    int
	Code      string
	Message   string
	Field     string
	RequestID string
	// RetryAfter is the Retry-After header of a 429, in seconds (0 when absent).
	RetryAfter int
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
	if e.Field != "" {
		msg += " [field " + e.Field + "]"
	}
	if e.RequestID != "" {
		msg += " (request id " + e.RequestID + ")"
	}
	return msg
}

// Response is what every generated XxxResponse has.
type Response interface {
	StatusCode() int
}

// Failure returns err when the call failed, a *APIError when the API answered 3xx or more, and nil
// for a 2xx: one check after any XxxWithResponse call.
func Failure(r Response, err error) error {
	if err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("payplat: no response")
	}
	status := r.StatusCode()
	if status < 300 {
		return nil
	}
	e := &APIError{Status: status, Code: http.StatusText(status)}
	body, resp := fieldsOf(r)
	decodeError(e, body)
	if resp != nil {
		e.RetryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	}
	return e
}

// fieldsOf reads the Body and HTTPResponse fields every generated response struct has.
func fieldsOf(r Response) ([]byte, *http.Response) {
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, nil
	}
	var body []byte
	var resp *http.Response
	if f := v.FieldByName("Body"); f.IsValid() {
		body, _ = f.Interface().([]byte)
	}
	if f := v.FieldByName("HTTPResponse"); f.IsValid() {
		resp, _ = f.Interface().(*http.Response)
	}
	return body, resp
}

func decodeError(e *APIError, body []byte) {
	var out struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			Field     string `json:"field"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &out) != nil || out.Error.Code == "" {
		e.Message = strings.TrimSpace(string(body))
		return
	}
	e.Code, e.Message, e.Field, e.RequestID = out.Error.Code, out.Error.Message, out.Error.Field, out.Error.RequestID
}
