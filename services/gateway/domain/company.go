package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/payplat/platform/pkg/validation"
)

// Company name length bounds, in characters, after trimming surrounding white space.
const (
	MinCompanyNameLen = 2
	MaxCompanyNameLen = 200
)

// Company is a partner of the platform: the tenant every API key, merchant and pool belongs to.
type Company struct {
	id        uuid.UUID
	name      string
	createdAt time.Time
}

// NewCompany validates name (trimmed, 2 to 200 characters, no control characters) and returns
// a new company with a fresh id.
func NewCompany(name string, now time.Time) (Company, error) {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	if n < MinCompanyNameLen || n > MaxCompanyNameLen {
		return Company{}, validation.Invalid("name", "must be between 2 and 200 characters")
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return Company{}, validation.Invalid("name", "must not contain control characters")
	}
	return Company{id: uuid.New(), name: name, createdAt: now.UTC().Truncate(time.Microsecond)}, nil
}

// UnmarshalCompanyFromDatabase rebuilds a company from its stored fields.
func UnmarshalCompanyFromDatabase(id uuid.UUID, name string, createdAt time.Time) Company {
	return Company{id: id, name: name, createdAt: createdAt.UTC()}
}

// ID returns the company's id.
func (c Company) ID() uuid.UUID { return c.id }

// Name returns the company's display name.
func (c Company) Name() string { return c.name }

// CreatedAt returns when the company was created.
func (c Company) CreatedAt() time.Time { return c.createdAt }
