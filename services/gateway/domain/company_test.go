package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

func TestCompanyNameIsTrimmedAndMustBe2To200PrintableCharacters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Acme", "Acme", true},
		{"  Acme  ", "Acme", true},
		{"AB", "AB", true},
		{strings.Repeat("é", 200), strings.Repeat("é", 200), true},
		{strings.Repeat("x", 201), "", false},
		{"A", "", false},
		{" A ", "", false},
		{"", "", false},
		{"Ac\x00me", "", false},
		{"Ac\nme", "", false},
	}
	for _, tt := range tests {
		c, err := domain.NewCompany(tt.in, time.Now())
		if tt.ok {
			if err != nil || c.Name() != tt.want || c.ID().String() == "" {
				t.Errorf("NewCompany(%q) = %q, %v", tt.in, c.Name(), err)
			}
			continue
		}
		var v *validation.Error
		if !errors.As(err, &v) || v.Field != "name" {
			t.Errorf("NewCompany(%q) error = %v, want validation error on name", tt.in, err)
		}
	}
}
