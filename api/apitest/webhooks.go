package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// CheckWebhook checks a webhook delivery as a partner's endpoint receives it against the
// document's `webhooks:` entry of its event (headers and body): the contract of the requests
// the platform sends, kept true by the end-to-end tests' receivers.
func (v *Validator) CheckWebhook(r *http.Request, body []byte) error {
	var envelope struct {
		Event string `json:"event"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("webhook body is not JSON: %w", err)
	}
	item := v.doc.Webhooks[envelope.Event]
	if item == nil || item.Post == nil {
		return fmt.Errorf("webhook %q is not in the document", envelope.Event)
	}
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	route := &routers.Route{Spec: v.doc, Path: envelope.Event, PathItem: item, Method: http.MethodPost, Operation: item.Post}
	in := &openapi3filter.RequestValidationInput{Request: req, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("webhook %s breaks the document: %s", envelope.Event, short(err))
	}
	if got := r.Header.Get("X-Webhook-Event"); got != envelope.Event {
		return fmt.Errorf("webhook %s sent with X-Webhook-Event %q", envelope.Event, got)
	}
	return nil
}
