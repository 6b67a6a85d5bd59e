package domain

import (
	"fmt"

	"github.com/payplat/platform/pkg/validation"
)

// Status is a merchant status (SPEC §3.1).
type Status string

// Merchant statuses. New merchants start ACTIVE (DESIGN §5).
const (
	StatusActive      Status = "ACTIVE"
	StatusPaused      Status = "PAUSED"
	StatusFrozen      Status = "FROZEN"
	StatusBlacklisted Status = "BLACKLISTED"
	StatusSuspended   Status = "SUSPENDED"
)

// Statuses lists every status.
var Statuses = []Status{StatusActive, StatusPaused, StatusFrozen, StatusBlacklisted, StatusSuspended}

// ParseStatus reads a status name.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", validation.Invalid("status", fmt.Sprintf("%q is not one of ACTIVE, PAUSED, FROZEN, BLACKLISTED, SUSPENDED", s))
}

// Locked reports whether only the platform may move a merchant out of s.
func (s Status) Locked() bool {
	return s == StatusFrozen || s == StatusBlacklisted || s == StatusSuspended
}

// CompanySettable reports whether a company may request s (self-service: ACTIVE or PAUSED).
func (s Status) CompanySettable() bool { return s == StatusActive || s == StatusPaused }

// Actor is who changes a merchant's status.
type Actor string

// Actors of a status change.
const (
	ActorCompany  Actor = "company"
	ActorPlatform Actor = "platform"
)
