package ports

import (
	"errors"
	"strings"
	"testing"

	"github.com/payplat/platform/pkg/validation"
)

// Strings PostgreSQL text cannot hold are refused with the member they are in (issue 17: a
// merchant named "a\u0000b" was a 500).
func TestDecodeJSONRefusesNULAndDuplicates(t *testing.T) {
	t.Parallel()
	type body struct {
		Name  *string `json:"name"`
		Email *string `json:"email"`
		Tags  []any   `json:"tags"`
		Meta  any     `json:"meta"`
	}
	for _, tc := range []struct{ in, field string }{
		{`{"name":"a\u0000b","email":"n1@example.com"}`, "name"},
		{`{"name":"ab","email":"n1@example.com\u0000"}`, "email"},
		{`{"name":"ab","email":"x","tags":["a",{"k":"\u0000"}]}`, "tags[1].k"},
		{`{"meta":{"a":[1,"\u0000"]}}`, "meta.a[1]"},
		{`{"meta":{"\u0000":1}}`, `meta.\u0000`},
		{`{"name":"\U0000"}`, ""},
		// A member named in another case: encoding/json would take it for "name".
		{`{"Name":"ab","email":"x"}`, "Name"},
		{`{"name":"ab","EMAIL":"x"}`, "EMAIL"},
		// A string over MaxStringBytes.
		{`{"name":"` + strings.Repeat("é", MaxStringBytes/2+1) + `"}`, "name"},
		// Duplicate members: decoders disagree on which one wins.
		{`{"name":"ab","email":"x","name":"cd"}`, "name"},
		{`{"meta":{"a":1,"b":{"a":1},"a":2}}`, "meta.a"},
	} {
		var dst body
		err := decodeJSONBody([]byte(tc.in), &dst)
		var v *validation.Error
		if tc.field == "" {
			if !errors.As(err, &v) {
				t.Errorf("%s: %v, want a validation error", tc.in, err)
			}
			continue
		}
		if !errors.As(err, &v) || v.Field != tc.field {
			t.Errorf("%s: %v, want a validation error on %q", tc.in, err, tc.field)
		}
	}
	for _, ok := range []string{`{"name":"a\\u0000b","email":"n1@example.com"}`, `{"name":"Café ☕"}`,
		`{"meta":{"name":1},"name":"ab","tags":[{"a":1},{"a":2}]}`} {
		var dst body
		if err := decodeJSONBody([]byte(ok), &dst); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
