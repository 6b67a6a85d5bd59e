package apitest

import (
	"slices"
	"strings"
)

// Route is an operation of the document: a method and a path template.
type Route struct {
	Method string
	Path   string
}

func (r Route) String() string { return r.Method + " " + r.Path }

// Operations lists every operation of the document's paths, sorted.
func Operations() ([]Route, error) {
	doc, err := Document()
	if err != nil {
		return nil, err
	}
	var out []Route
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, Route{Method: strings.ToUpper(method), Path: path})
		}
	}
	slices.SortFunc(out, func(a, b Route) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// Documented reports whether the document has the operation.
func Documented(method, path string) bool {
	doc, err := Document()
	if err != nil {
		return false
	}
	item := doc.Paths.Value(path)
	return item != nil && item.GetOperation(strings.ToUpper(method)) != nil
}

// Publishable reports whether the operation is marked x-publishable-key: true (a publishable
// key may call it).
func Publishable(method, path string) bool {
	doc, err := Document()
	if err != nil {
		return false
	}
	item := doc.Paths.Value(path)
	if item == nil {
		return false
	}
	op := item.GetOperation(strings.ToUpper(method))
	return op != nil && op.Extensions["x-publishable-key"] == true
}

// QueryParameters returns the names of the query parameters the operation takes, sorted (nil for
// an operation the document lacks).
func QueryParameters(method, path string) []string {
	doc, err := Document()
	if err != nil {
		return nil
	}
	item := doc.Paths.Value(path)
	if item == nil {
		return nil
	}
	op := item.GetOperation(strings.ToUpper(method))
	if op == nil {
		return nil
	}
	var names []string
	for _, p := range append(item.Parameters, op.Parameters...) {
		if p.Value != nil && p.Value.In == "query" {
			names = append(names, p.Value.Name)
		}
	}
	slices.Sort(names)
	return names
}
