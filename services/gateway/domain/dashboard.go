package domain

import (
	"errors"
	"time"
)

// Errors of dashboard sessions (issue 18). The dashboard tells the person which one ended their
// session; none of them reveals anything about a key.
var (
	// ErrSessionNotFound: no session has the presented token (never opened, signed out, purged).
	ErrSessionNotFound = errors.New("no such dashboard session")
	// ErrSessionExpired: the session was idle longer than the configured idle expiry.
	ErrSessionExpired = errors.New("the dashboard session expired")
	// ErrSessionKeyRevoked: the API key the session was opened with has been rolled.
	ErrSessionKeyRevoked = errors.New("the API key of this dashboard session was rolled")
)

// DashboardSession is an open dashboard session: the principal of the secret key it was opened
// with and when it was last used.
type DashboardSession struct {
	Principal  Principal
	LastSeenAt time.Time
}

// Merchant statuses (SPEC §3.1). The company sets ACTIVE and PAUSED; the others are the
// platform's, shown read-only with their reason.
const (
	MerchantActive      = "ACTIVE"
	MerchantPaused      = "PAUSED"
	MerchantFrozen      = "FROZEN"
	MerchantBlacklisted = "BLACKLISTED"
	MerchantSuspended   = "SUSPENDED"
)

// IsPlatformStatus reports whether only the platform may change a merchant out of status.
func IsPlatformStatus(status string) bool {
	return status == MerchantFrozen || status == MerchantBlacklisted || status == MerchantSuspended
}

// DashboardMerchant is a merchant as the dashboard lists it: the list fields of SPEC §2.1 plus
// the status, and the reason of the last status change when the platform set it.
type DashboardMerchant struct {
	MerchantSummary
	Status       string
	StatusReason string
	UpdatedAt    time.Time
}

// MaskedKey is an active API key of a company as the dashboard shows it: its type and the
// non-secret display prefix, never the key.
type MaskedKey struct {
	Type          KeyType
	DisplayPrefix string
	CreatedAt     time.Time
}

// WebhookEndpoint is a company's webhook endpoint as stored (no secret).
type WebhookEndpoint struct {
	URL           string
	Enabled       bool
	SecretVersion int
	UpdatedAt     time.Time
}

// WebhookDelivery is one delivery log entry with the exact body that was (or will be) POSTed.
type WebhookDelivery struct {
	WebhookLogEntry
	Payload string
}

// WebhookHealth summarises a company's recent deliveries: counts per status among the last
// Window deliveries, and the most recent failing ones.
type WebhookHealth struct {
	Window  int
	Success int
	Failed  int
	Pending int
	Failing []WebhookLogEntry
}

// SuccessRate is the percentage of settled deliveries (succeeded or failed) that succeeded, and
// false when none has settled yet.
func (h WebhookHealth) SuccessRate() (float64, bool) {
	settled := h.Success + h.Failed
	if settled == 0 {
		return 0, false
	}
	return float64(h.Success) * 100 / float64(settled), true
}

// WebhookLogCursor continues a delivery log listing after the entry it names (keyset
// pagination on the log's index): created_at and id of the last entry shown.
type WebhookLogCursor struct {
	CreatedAt time.Time
	ID        string
}

// Kinds of LiveEvent.
const (
	LivePayment = "payment"
	LivePool    = "pool"
	LiveWebhook = "webhook"
	// LiveKeysRolled: one of the company's keys was rolled; open sessions re-check theirs.
	LiveKeysRolled = "keys"
)

// LiveEvent is something that happened to the signed-in company in its environment, for the
// dashboard's live updates: never more than the kind, the event type, the id it concerns and
// its status.
type LiveEvent struct {
	Kind   string `json:"kind"`
	Type   string `json:"type,omitempty"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
}
