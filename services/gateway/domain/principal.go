package domain

import "github.com/google/uuid"

// Principal is the caller behind an API key: the key fixes company and environment, and
// nothing of another company or of the other environment is ever visible to it.
type Principal struct {
	CompanyID   uuid.UUID
	Environment Environment
	KeyKind     KeyKind
	KeyID       uuid.UUID
}
