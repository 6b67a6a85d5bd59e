// Package apifuzz attacks a running gateway with requests generated from its OpenAPI document
// (issue 17): valid requests built from each operation's schema and example, and invalid ones
// made from them by one mutation each (wrong types, missing and unknown members, duplicate
// members, trailing data, huge and unicode strings, bad amounts, bad ids, bad enum values, bad
// pagination, wrong content types, bodies over the limit, wrong and cross-company keys). Every
// exchange is checked against the document (package apitest); the run fails on any 5xx, on an
// error body that is not the Error schema, and on a request accepted that had to be refused.
// Refused requests are sent in batches between two snapshots of the platform's state, which
// must be equal: a refused request changes nothing. Run reports counts per route and status.
package apifuzz

import (
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/payplat/platform/api/apitest"
)

// operation is one documented operation, with what the generator needs of it.
type operation struct {
	method, path string
	op           *openapi3.Operation
	auth         auth
	body         *openapi3.Schema // nil without a JSON body
	example      map[string]any
	// publishable says a publishable key is accepted too (x-publishable-key).
	publishable bool
}

// auth is the credential an operation takes.
type auth int

const (
	authNone auth = iota
	authKey
	authAdmin
	authCron
)

// operations lists the document's operations in a stable order.
func operations() ([]operation, error) {
	doc, err := apitest.Document()
	if err != nil {
		return nil, err
	}
	var out []operation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := operation{method: strings.ToUpper(method), path: path, op: op, auth: authOf(doc, op)}
			o.publishable = op.Extensions["x-publishable-key"] == true
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					o.body = mt.Schema.Value
					o.example, _ = mt.Example.(map[string]any)
				}
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.method+a.path, b.method+b.path) })
	return out, nil
}

func authOf(doc *openapi3.T, op *openapi3.Operation) auth {
	sec := doc.Security
	if op.Security != nil {
		sec = *op.Security
	}
	for _, req := range sec {
		for name := range req {
			switch name {
			case "apiKey", "bearerKey":
				return authKey
			case "adminToken":
				return authAdmin
			case "cronSecret":
				return authCron
			}
		}
	}
	return authNone
}

// pathParams are the names of the operation's path parameters.
func (o operation) pathParams() []string {
	var out []string
	for _, p := range o.op.Parameters {
		if p.Value != nil && p.Value.In == "path" {
			out = append(out, p.Value.Name)
		}
	}
	return out
}

// query returns the operation's query parameters by name.
func (o operation) query() map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	for _, p := range o.op.Parameters {
		if p.Value != nil && p.Value.In == "query" && p.Value.Schema != nil {
			out[p.Value.Name] = p.Value.Schema.Value
		}
	}
	return out
}

// takesIdempotencyKey reports whether the operation documents Idempotency-Key.
func (o operation) takesIdempotencyKey() bool {
	for _, p := range o.op.Parameters {
		if p.Value != nil && p.Value.In == "header" && p.Value.Name == "Idempotency-Key" {
			return true
		}
	}
	return false
}
