package domain

import (
	"errors"
)

// Sentinel errors of the gateway. The HTTP port maps each to a status and error code in one
// place (ports/errors.go); code that adds an error here adds its mapping there.
var (
	// ErrNotFound means the addressed resource does not exist for this caller.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized means the caller's credential is missing, malformed, unknown or revoked.
	// Every such case yields the same error so that a caller cannot tell which one it was.
	ErrUnauthorized = errors.New("invalid or missing credentials")
	// ErrWrongKeyKind means a valid API key of a kind the route does not accept (a publishable
	// key on a secret-only route).
	ErrWrongKeyKind = errors.New("key kind not accepted here")
	// ErrForbidden means the caller is authenticated but not allowed to do this.
	ErrForbidden = errors.New("forbidden")
)
