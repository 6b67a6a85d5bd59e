package ports

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/payplat/platform/pkg/validation"
)

// strictQuery refuses, with 400 VALIDATION_ERROR naming the parameter, a request whose query
// string is malformed, names a parameter the route does not take, or gives one twice (issue 16):
// a misspelt parameter (?limt=5, ?Status=FAILED) silently ignored would answer with something
// other than what was asked. Every route goes through it (Handle), with the parameters it
// takes; the handlers then read the values they know to be single and expected.
func (s *Server) strictQuery(params []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkQuery(r.URL.RawQuery, params); err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkQuery is strictQuery's check of a raw query string against the parameters a route takes.
// It reports the first offending parameter in the order the client wrote them.
func checkQuery(raw string, params []string) error {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return validation.Invalid("", "the query string is malformed")
	}
	for kv := range strings.SplitSeq(raw, "&") {
		if kv == "" {
			continue
		}
		name, _, _ := strings.Cut(kv, "=")
		name, _ = url.QueryUnescape(name) // ParseQuery accepted it
		switch {
		case !slices.Contains(params, name):
			return validation.Invalid(name, "unknown query parameter")
		case len(q[name]) > 1:
			return validation.Invalid(name, "must be given at most once")
		}
	}
	return nil
}

// pageLimit reads the query parameter limit, a whole number from 1 to maxLimit; def when absent.
func pageLimit(q url.Values, def, maxLimit int) (int, error) {
	if !q.Has("limit") {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get("limit"))
	if err != nil || n < 1 || n > maxLimit {
		return 0, validation.Invalid("limit", fmt.Sprintf("must be a whole number from 1 to %d", maxLimit))
	}
	return n, nil
}

// pageOffset reads the query parameter offset, a whole number of at least 0; 0 when absent.
func pageOffset(q url.Values) (int, error) {
	if !q.Has("offset") {
		return 0, nil
	}
	n, err := strconv.Atoi(q.Get("offset"))
	if err != nil || n < 0 {
		return 0, validation.Invalid("offset", "must be a whole number of at least 0")
	}
	return n, nil
}
