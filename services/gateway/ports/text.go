package ports

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/payplat/platform/services/gateway/domain"
)

// storableStrings refuses a JSON body holding a string, or a member name, that PostgreSQL's text
// type cannot store: one with the NUL character (U+0000, which JSON can carry as \u0000). It
// names the member, so that every route answers 400 VALIDATION_ERROR with the field before
// anything is sent to a service or stored (issue 17: such a name was a 500). Invalid UTF-8
// needs no check: encoding/json replaces it with U+FFFD while decoding.
func storableStrings(body []byte) error {
	// Only a body with a \u0000 escape can hold a NUL (a raw NUL byte is not valid JSON), so the
	// walk is skipped for every other body.
	if !bytes.Contains(bytes.ToLower(body), []byte(`\u0000`)) {
		return nil
	}
	if field, found := nulMember(body); found {
		return domain.Invalid(field, "must not contain the NUL character (U+0000)")
	}
	return nil
}

// nulMember walks a JSON document and returns the path (members joined by dots, array positions
// in brackets) of the first string value or member name that contains NUL.
func nulMember(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				if top != nil && !top.object {
					top.index++
				}
				stack = append(stack, &frame{object: v == '{', index: -1, expectKey: v == '{'})
				continue
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].valueDone()
			}
			continue
		case string:
			if top != nil && top.object && top.expectKey {
				top.name, top.expectKey = v, false
				if strings.IndexByte(v, 0) >= 0 {
					return pathOf(stack), true
				}
				continue
			}
			if top != nil && !top.object {
				top.index++
			}
			if strings.IndexByte(v, 0) >= 0 {
				return pathOf(stack), true
			}
		default:
			if top != nil && !top.object {
				top.index++
			}
		}
		if top != nil {
			top.valueDone()
		}
	}
}

// frame is an object or array being walked by nulMember.
type frame struct {
	object    bool
	name      string // the current member of an object
	index     int    // the current element of an array
	expectKey bool
}

// valueDone notes that a member's value ended: in an object, a member name comes next.
func (f *frame) valueDone() {
	if f.object {
		f.expectKey = true
	}
}

func pathOf(stack []*frame) string {
	var b strings.Builder
	for _, f := range stack {
		switch {
		case f.object:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			// A NUL in a member name is spelled as JSON would, not echoed raw.
			b.WriteString(strings.ReplaceAll(f.name, "\x00", `\u0000`))
		default:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}
