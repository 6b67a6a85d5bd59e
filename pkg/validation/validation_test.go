package validation_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/payplat/platform/pkg/validation"
)

// An invalid input is found through wrapping and names its field, when it has one.
func TestAnInvalidInputNamesItsField(t *testing.T) {
	err := fmt.Errorf("creating: %w", validation.Invalid("email", "must be an email address"))
	var v *validation.Error
	if !errors.As(err, &v) || v.Field != "email" || v.Message != "must be an email address" {
		t.Fatalf("errors.As: %v", err)
	}
	if got := v.Error(); got != "email: must be an email address" {
		t.Fatalf("Error() = %q", got)
	}
	if got := validation.Invalid("", "request is not valid JSON").Error(); got != "request is not valid JSON" {
		t.Fatalf("without a field: %q", got)
	}
}
