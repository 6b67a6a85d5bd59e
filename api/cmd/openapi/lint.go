package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// load parses and validates the document as OpenAPI 3.1, every example checked against its
// schema.
func load(doc []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	if !t.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("openapi is %q, want 3.1", t.OpenAPI)
	}
	if err := t.Validate(context.Background(), openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaFormatValidation()); err != nil {
		return nil, fmt.Errorf("invalid document: %w", err)
	}
	return t, nil
}

// ToJSON returns the validated document as indented JSON.
func ToJSON(doc []byte) ([]byte, error) {
	t, err := load(doc)
	if err != nil {
		return nil, err
	}
	raw, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Lint validates the document and applies the house rules kin-openapi does not know: every
// operation has an operationId, a summary and a tag; every request and 2xx JSON response has an
// example; every operation documents 400 (the gateway refuses a query parameter an operation
// does not list, on every route), and every operation that takes a body or credentials documents
// the errors those can cause (413/415 and 401); every error response is the Error schema.
func Lint(doc []byte) ([]string, error) {
	t, err := load(doc)
	if err != nil {
		return nil, err
	}
	var findings []string
	seen := map[string]string{}
	for _, path := range t.Paths.InMatchingOrder() {
		for method, op := range t.Paths.Value(path).Operations() {
			where := method + " " + path
			findings = append(findings, lintOperation(where, op, seen)...)
		}
	}
	for name, item := range t.Webhooks {
		for method, op := range item.Operations() {
			findings = append(findings, lintOperation("webhook "+name+" "+method, op, seen)...)
		}
	}
	slices.Sort(findings)
	return findings, nil
}

func lintOperation(where string, op *openapi3.Operation, seen map[string]string) []string {
	var f []string
	add := func(format string, args ...any) { f = append(f, where+": "+fmt.Sprintf(format, args...)) }
	switch {
	case op.OperationID == "":
		add("no operationId")
	case seen[op.OperationID] != "":
		add("operationId %s also used by %s", op.OperationID, seen[op.OperationID])
	default:
		seen[op.OperationID] = where
	}
	if op.Summary == "" {
		add("no summary")
	}
	if len(op.Tags) == 0 {
		add("no tag")
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt == nil {
			add("request body is not application/json")
		} else if mt.Example == nil && len(mt.Examples) == 0 {
			add("request body has no example")
		}
	}
	f = append(f, lintResponses(where, op)...)
	return f
}

func lintResponses(where string, op *openapi3.Operation) []string {
	var f []string
	webhook := strings.HasPrefix(where, "webhook ")
	secured := op.Security == nil || len(*op.Security) > 0
	for code, ref := range op.Responses.Map() {
		r := ref.Value
		if code[0] == '2' && !webhook {
			mt := r.Content.Get("application/json")
			if mt != nil && mt.Example == nil && len(mt.Examples) == 0 {
				f = append(f, fmt.Sprintf("%s: %s response has no example", where, code))
			}
		}
		if code[0] == '4' || code[0] == '5' {
			if webhook {
				continue
			}
			mt := r.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" {
				if !(where == "GET /readyz" && code == "503") {
					f = append(f, fmt.Sprintf("%s: %s response is not the Error schema", where, code))
				}
			}
		}
	}
	if webhook {
		return f
	}
	if op.Responses.Value("400") == nil {
		f = append(f, where+": does not document 400 (an unknown query parameter is refused everywhere)")
	}
	if op.RequestBody != nil {
		for _, code := range []string{"400", "413", "415"} {
			if op.Responses.Value(code) == nil {
				f = append(f, fmt.Sprintf("%s: takes a body but does not document %s", where, code))
			}
		}
	}
	for _, p := range op.Parameters {
		if p.Value != nil && p.Value.Name == "Idempotency-Key" {
			for _, code := range []string{"400", "409"} {
				if op.Responses.Value(code) == nil {
					f = append(f, fmt.Sprintf("%s: takes an Idempotency-Key but does not document %s", where, code))
				}
			}
		}
	}
	if secured && op.Security != nil && op.Responses.Value("401") == nil {
		f = append(f, where+": needs credentials but does not document 401")
	}
	return f
}
