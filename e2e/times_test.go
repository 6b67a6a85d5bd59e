package e2e_test

import (
	"fmt"
	"regexp"
	"strings"
)

// apiTime is the one format of every time the platform shows partners, in API responses and
// webhook payloads alike: RFC 3339, UTC, milliseconds.
var apiTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// checkTimes walks a decoded JSON value and reports every time field (a string member named
// timestamp or ending in _at) not in apiTime. Every e2e response and every webhook a test
// receiver gets is checked with it.
func checkTimes(v any) error {
	var bad []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, m := range x {
				if s, ok := m.(string); ok && (k == "timestamp" || strings.HasSuffix(k, "_at")) && !apiTime.MatchString(s) {
					bad = append(bad, fmt.Sprintf("%s.%s = %q", path, k, s))
				}
				walk(path+"."+k, m)
			}
		case []any:
			for i, m := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), m)
			}
		}
	}
	walk("", v)
	if len(bad) > 0 {
		return fmt.Errorf("times not in the API format (RFC 3339, UTC, milliseconds): %s", strings.Join(bad, ", "))
	}
	return nil
}
