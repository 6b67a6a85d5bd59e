// Package validation is the one error for refused input, shared by the services' domains so that
// every port maps it alike: to VALIDATION_ERROR with the field at fault.
package validation

// Error reports an input that cannot be accepted: Field names it as the client spelled it (a
// JSON field or a query parameter), or is empty when no single field is to blame; Message says
// why, for people.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Invalid returns an *Error saying why the value of field was refused.
func Invalid(field, message string) error { return &Error{Field: field, Message: message} }
