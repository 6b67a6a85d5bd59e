// Package apitest keeps the partner API's document true: it checks HTTP exchanges against
// api/openapi.yaml with kin-openapi's openapi3filter, request and response. The gateway's tests
// wrap their HTTP client with Transport, the end-to-end tests and the fuzzer too, so that a field
// renamed in code without the document (or the other way round) fails a test.
//
// The rules of an exchange (Check):
//   - a documented route: the response must be documented for the operation (status, headers
//     and body); a request the document says is invalid must be refused with a 4xx;
//   - a route the document lacks: only an error answer (status 400 or more with the Error body)
//     is allowed, unless the caller said the route is one of its own (Options.Undocumented);
//   - the dashboard's HTML pages (/dashboard/...) are outside the document and skipped.
package apitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/payplat/platform/api"
)

// ExcludedPrefix is where the dashboard's HTML pages live: for people, with a session cookie
// and CSRF-checked forms, they are not part of the API document.
const ExcludedPrefix = "/dashboard/"

// Validator checks exchanges against the document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	errSch *openapi3.Schema
	// undocumented reports routes the caller added for its own tests.
	undocumented func(method, path string) bool
}

// Options adjust New.
type Options struct {
	// Undocumented reports whether a request is for a route that a test registered itself
	// (not part of the product); such exchanges are not checked.
	Undocumented func(r *http.Request) bool
}

var (
	loadOnce sync.Once
	loaded   *openapi3.T
	loadErr  error
)

// Document returns the parsed and validated document (parsed once per process).
func Document() (*openapi3.T, error) {
	loadOnce.Do(func() {
		loader := openapi3.NewLoader()
		loaded, loadErr = loader.LoadFromData(api.YAML())
		if loadErr == nil {
			loadErr = loaded.Validate(loader.Context)
		}
		if loadErr == nil {
			// Match any host: tests serve on random ports.
			loaded.Servers = nil
		}
	})
	return loaded, loadErr
}

// New returns a validator of the gateway's document.
func New(opts ...Options) (*Validator, error) {
	doc, err := Document()
	if err != nil {
		return nil, fmt.Errorf("apitest: loading the document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("apitest: routing the document: %w", err)
	}
	v := &Validator{doc: doc, router: router, errSch: doc.Components.Schemas["Error"].Value}
	for _, o := range opts {
		if o.Undocumented != nil {
			u := o.Undocumented
			v.undocumented = func(method, path string) bool {
				r, _ := http.NewRequest(method, path, nil)
				return r != nil && u(r)
			}
		}
	}
	return v, nil
}

// Exchange is one request and its response, bodies read.
type Exchange struct {
	Request      *http.Request
	RequestBody  []byte
	Status       int
	Header       http.Header
	ResponseBody []byte
}

// Check returns why the exchange breaks the document, or nil.
func (v *Validator) Check(ctx context.Context, x Exchange) error {
	if strings.HasPrefix(x.Request.URL.Path, ExcludedPrefix) {
		return nil
	}
	req := validationRequest(x)
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return v.checkUndocumented(x, err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true, MultiError: false}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	var problems []string
	// A refused request (4xx) keeps the rule whatever the document says of it: only an
	// accepted one (or a failed one) needs the request checked, which spares the cost of
	// validating, and describing, thousands of broken requests.
	if x.Status < 400 || x.Status >= 500 {
		if reqErr := openapi3filter.ValidateRequest(ctx, in); reqErr != nil {
			problems = append(problems, fmt.Sprintf("the document refuses the request (%s) but the gateway answered %d",
				short(reqErr), x.Status))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.Header,
		Options: opts}
	out.SetBodyBytes(x.ResponseBody)
	if respErr := openapi3filter.ValidateResponse(ctx, out); respErr != nil {
		problems = append(problems, "the response breaks the document: "+short(respErr))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s -> %d %s: %s", x.Request.Method, x.Request.URL.RequestURI(), x.Status,
		clip(x.ResponseBody), strings.Join(problems, "; "))
}

// checkUndocumented checks an exchange whose method and path the document lacks: it must be an
// error with the Error body, unless the test said the route is its own.
func (v *Validator) checkUndocumented(x Exchange, routeErr error) error {
	if v.undocumented != nil && v.undocumented(x.Request.Method, x.Request.URL.Path) {
		return nil
	}
	if x.Status < 400 {
		return fmt.Errorf("%s %s -> %d: the document has no such operation (%v)", x.Request.Method,
			x.Request.URL.Path, x.Status, routeErr)
	}
	if err := v.CheckErrorBody(x.ResponseBody); err != nil {
		return fmt.Errorf("%s %s -> %d %s: %w", x.Request.Method, x.Request.URL.Path, x.Status,
			clip(x.ResponseBody), err)
	}
	return nil
}

// CheckErrorBody checks that body is the document's Error.
func (v *Validator) CheckErrorBody(body []byte) error {
	var value any
	if err := jsonUnmarshal(body, &value); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	if err := v.errSch.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("error body is not the Error schema: %s", short(err))
	}
	return nil
}

// validationRequest rebuilds the request with its body for openapi3filter. A body without
// Content-Type is JSON to the gateway, and to the check too.
func validationRequest(x Exchange) *http.Request {
	req := x.Request.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
	req.ContentLength = int64(len(x.RequestBody))
	if len(x.RequestBody) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	// The gateway reads the first of repeated headers; the document's parameters are single.
	return req
}

func short(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) && len(me) > 0 {
		err = me[0]
	}
	s := err.Error()
	if i := strings.Index(s, "\nSchema:"); i > 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
