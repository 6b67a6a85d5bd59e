package ports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/payplat/platform/pkg/validation"
)

// checkMembers refuses what encoding/json lets through but the API does not take (issue 17):
//   - a member given twice in one object ({"amount":"1","amount":"1000"}): decoders disagree on
//     which one wins, so a proxy or a log and the gateway could read different requests;
//   - a string or member name that PostgreSQL's text type cannot store, one with the NUL
//     character (U+0000, which JSON can carry as \u0000): such a merchant name was a 500.
//
// Both are 400 VALIDATION_ERROR naming the member, before anything is sent to a service or
// stored. Invalid UTF-8 needs no check: encoding/json replaces it with U+FFFD while decoding.
func checkMembers(body []byte) error {
	field, reason, found := badMember(body)
	if !found {
		return nil
	}
	return validation.Invalid(field, reason)
}

// MaxStringBytes bounds every string of a request body. No member needs more (a webhook URL is
// at most 2,048 characters, a status reason 500), and the bound keeps a request from carrying
// megabytes to the services over the bus, whose events hold at most 4,096 bytes of text.
const MaxStringBytes = 4096

// exactMembers refuses a top-level member whose name is not exactly one of dst's (a struct's
// JSON tags): encoding/json matches names case-insensitively, so {"Name": …} would be read as
// "name" while the document, and any other decoder, see an unknown member.
func exactMembers(body []byte, dst any) error {
	known := jsonNames(dst)
	if known == nil {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil
	}
	for name := range members {
		if !known[name] {
			return validation.Invalid(name, "unknown field")
		}
	}
	return nil
}

// jsonNames returns the JSON member names of the struct dst points to, or nil for another type.
func jsonNames(dst any) map[string]bool {
	t := reflect.TypeOf(dst)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	names := map[string]bool{}
	for f := range t.Elem().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// badMember walks a JSON document (already decoded once, so well formed) and returns the path
// (members joined by dots, array positions in brackets) of the first duplicate member or NUL.
func badMember(body []byte) (field, reason string, found bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && !top.object {
					top.index++
				}
				stack = append(stack, newFrame(d == '{'))
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 {
					stack[len(stack)-1].valueDone()
				}
			}
			continue
		}
		s, isString := tok.(string)
		if top != nil && top.object && top.expectKey {
			top.name, top.expectKey = s, false
			if top.seen[s] {
				return pathOf(stack), "is given more than once", true
			}
			top.seen[s] = true
			if strings.IndexByte(s, 0) >= 0 {
				return pathOf(stack), nulReason, true
			}
			continue
		}
		if top != nil && !top.object {
			top.index++
		}
		if isString && strings.IndexByte(s, 0) >= 0 {
			return pathOf(stack), nulReason, true
		}
		if isString && len(s) > MaxStringBytes {
			return pathOf(stack), fmt.Sprintf("must be at most %d bytes", MaxStringBytes), true
		}
		if top != nil {
			top.valueDone()
		}
	}
}

const nulReason = "must not contain the NUL character (U+0000)"

func newFrame(object bool) *frame {
	f := &frame{object: object, index: -1, expectKey: object}
	if object {
		f.seen = map[string]bool{}
	}
	return f
}

// frame is an object or array being walked by nulMember.
type frame struct {
	object    bool
	name      string // the current member of an object
	seen      map[string]bool
	index     int // the current element of an array
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
