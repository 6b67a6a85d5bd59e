package e2e_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/payplat/platform/api/apitest"
	"github.com/payplat/platform/api/client"
)

// contractClient is the HTTP client of every exchange with the gateway in these tests: it
// checks each one against the OpenAPI document (api/openapi.yaml), request and response, and
// fails the test on a mismatch (issue 17).
func contractClient(t testing.TB) *http.Client {
	t.Helper()
	v, err := apitest.New()
	if err != nil {
		t.Fatal(err)
	}
	return v.Client(func(err error) { t.Errorf("contract (api/openapi.yaml): %v", err) })
}

// partner is the typed client (api/client, generated from the document) with a company's key,
// as a partner's code would hold it.
func (s *stack) partner(key string) *client.ClientWithResponses {
	s.t.Helper()
	c, err := client.NewClientWithResponses(s.url, client.WithHTTPClient(s.http), client.WithAPIKey(key))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// operator is the typed client with the platform's admin token.
func (s *stack) operator() *client.ClientWithResponses {
	s.t.Helper()
	c, err := client.NewClientWithResponses(s.url, client.WithHTTPClient(s.http), client.WithBearer(s.creds.AdminToken))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// ok fails the test unless a typed call succeeded (2xx).
func ok(t testing.TB, r client.Response, err error) {
	t.Helper()
	if err := client.Failure(r, err); err != nil {
		t.Fatal(err)
	}
}

// idempotent is a fresh Idempotency-Key, as the client's users are told to send on every POST.
func idempotent() client.RequestEditorFn { return client.WithIdempotencyKey(uuid.NewString()) }

var bg = context.Background()

// recordWebhook keeps the first delivery of each event in APITEST_RECORD_DIR, when set: real
// payloads, for the document's webhook examples.
func recordWebhook(r *http.Request, body []byte) {
	dir := os.Getenv("APITEST_RECORD_DIR")
	if dir == "" {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "webhook-"+r.Header.Get("X-Webhook-Event")+".json"),
		os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(body)
}
