package ports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/payplat/platform/pkg/validation"
)

// MaxBodyBytes is the largest request body the gateway reads (1 MiB); larger bodies get 413.
const MaxBodyBytes = 1 << 20

// decodeJSON decodes the request body, a single JSON object, into dst. It rejects bodies that
// are not JSON (415), too large (413), malformed, not an object, with unknown or duplicate
// members, with strings PostgreSQL cannot store (NUL) or with trailing data (400
// VALIDATION_ERROR). A missing Content-Type is accepted as JSON, since some HTTP tools
// leave it out; any other media type is refused.
func decodeJSON(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		media, _, err := mime.ParseMediaType(ct)
		if err != nil || !(media == "application/json" || strings.HasSuffix(media, "+json")) {
			return errUnsupportedMediaType
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	return decodeJSONBody(body, dst)
}

// decodeJSONBody is decodeJSON's work on a body already read: the request decoder that the
// native fuzz targets exercise (decoders_fuzz_test.go).
func decodeJSONBody(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &validation.Error{Message: "request body must hold a single JSON object"}
	}
	// Decoding null into dst leaves it empty, as {} would: a body must be an object.
	if t := bytes.TrimLeft(body, " \t\r\n"); t[0] != '{' {
		return &validation.Error{Message: "request body must be a JSON object"}
	}
	if err := checkMembers(body); err != nil {
		return err
	}
	return exactMembers(body, dst)
}

// jsonError turns a decoding error into the error the client sees.
func jsonError(err error) error {
	var (
		tooLarge  *http.MaxBytesError
		syntax    *json.SyntaxError
		typeError *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooLarge):
		return err
	case errors.Is(err, io.EOF):
		return &validation.Error{Message: "request body is empty; a JSON object is required"}
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return &validation.Error{Message: "request body is not valid JSON"}
	case errors.As(err, &typeError):
		if typeError.Field == "" {
			return &validation.Error{Message: "request body must be a JSON object"}
		}
		return &validation.Error{Field: typeError.Field,
			Message: fmt.Sprintf("must be a %s", jsonType(typeError.Type.Kind().String()))}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &validation.Error{Field: field, Message: "unknown field"}
	default:
		return &validation.Error{Message: "request body is not valid JSON"}
	}
}

func jsonType(kind string) string {
	switch {
	case kind == "string":
		return "string"
	case kind == "bool":
		return "boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice", kind == "array":
		return "array"
	default:
		return "object"
	}
}

// writeJSON writes v as the JSON body of a response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		// Only a programming error (an unencodable type) gets here.
		slog.Error("encoding response", "error", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"INTERNAL","message":"internal error","request_id":""}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// jsonList converts every element of list to its JSON form; an empty list is [] in the answer,
// never null, as the API documents its lists.
func jsonList[T, J any](list []T, toJSON func(T) J) []J {
	out := make([]J, len(list))
	for i, v := range list {
		out[i] = toJSON(v)
	}
	return out
}
