package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// Transport returns a RoundTripper that sends requests with next (http.DefaultTransport when
// nil) and passes every exchange to report when it breaks the document. The response body is
// read in full and handed on unchanged.
func (v *Validator) Transport(next http.RoundTripper, report func(error)) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper{v: v, next: next, report: report}
}

type roundTripper struct {
	v      *Validator
	next   http.RoundTripper
	report func(error)
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil // a live stream has no end to wait for
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return resp, nil // the caller sees the short body; nothing to check
	}
	x := Exchange{Request: req, RequestBody: reqBody, Status: resp.StatusCode, Header: resp.Header, ResponseBody: body}
	if cerr := t.v.Check(context.Background(), x); cerr != nil {
		t.report(cerr)
	} else {
		t.v.Record(x)
	}
	return resp, nil
}

// Client returns an HTTP client whose transport checks every exchange (see Transport).
func (v *Validator) Client(report func(error)) *http.Client {
	return &http.Client{Transport: v.Transport(nil, report)}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// The gateway's non-JSON pages (the reference page, its script, the metrics) are text to the
// check: their schemas are plain strings.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/javascript", openapi3filter.PlainBodyDecoder)
}
