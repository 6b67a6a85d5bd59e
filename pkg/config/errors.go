package config

import (
	"errors"
	"reflect"
	"strings"

	"github.com/caarlos0/env/v11"
)

// Error reports every environment variable that could not be loaded.
type Error struct {
	// Problems lists the bad variables in struct field order.
	Problems []Problem
}

// Problem is one variable that could not be loaded.
type Problem struct {
	// Var is the environment variable's name ("A or B" when two fields of the same Go name
	// read different variables and the library did not say which; the field name when no
	// variable is known).
	Var string
	// Err says what is wrong, as the env library reported it.
	Err error
}

// Error returns "config: LOG_LEVEL: ...; SHUTDOWN_TIMEOUT: ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Var)
		b.WriteString(": ")
		b.WriteString(problemText(p.Err))
	}
	return b.String()
}

// Unwrap returns the underlying errors, so errors.As finds env.VarIsNotSetError and the like.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p.Err
	}
	return errs
}

// problemText drops the env library's field-oriented wrapping where the variable name already
// says which field it is.
func problemText(err error) string {
	var pe env.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// newError turns the env library's error for cfg into an *Error keyed by variable name.
func newError(cfg any, err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return &Error{Problems: []Problem{{Var: "?", Err: err}}}
	}
	vars := map[string][]string{}
	varNames(reflect.TypeOf(cfg).Elem(), "", vars, map[reflect.Type]bool{})
	problems := make([]Problem, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		problems = append(problems, Problem{Var: varOf(e, vars), Err: e})
	}
	return &Error{Problems: problems}
}

// varOf names the variable an env library error is about.
func varOf(err error, vars map[string][]string) string {
	switch e := err.(type) {
	case env.VarIsNotSetError:
		return e.Key
	case env.EmptyVarError:
		return e.Key
	case env.LoadFileContentError:
		return e.Key
	case env.ParseError:
		// The library names the Go field, not the variable.
		if keys := vars[e.Name]; len(keys) > 0 {
			return strings.Join(keys, " or ")
		}
		return e.Name
	default:
		return "?"
	}
}

// varNames maps Go field names to the variables they read, following the env library's rules
// for `env` keys, `envPrefix` and nested structs.
func varNames(t reflect.Type, prefix string, out map[string][]string, visiting map[reflect.Type]bool) {
	if t.Kind() != reflect.Struct || visiting[t] {
		return
	}
	visiting[t] = true
	defer delete(visiting, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if key == "-" {
			continue
		}
		if key != "" {
			out[f.Name] = append(out[f.Name], prefix+key)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		varNames(ft, prefix+f.Tag.Get("envPrefix"), out, visiting)
	}
}
