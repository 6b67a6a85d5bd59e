package domain

import (
	"time"

	"github.com/google/uuid"
)

// Endpoint is a company's webhook endpoint in one environment.
type Endpoint struct {
	ID            uuid.UUID
	CompanyID     string
	Environment   string
	URL           string
	Enabled       bool
	SecretSealed  []byte
	SecretVersion int
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Delivery is one event for one endpoint: a delivery log entry (SPEC 2.8) with its body.
type Delivery struct {
	ID             uuid.UUID
	EndpointID     uuid.UUID
	CompanyID      string
	Environment    string
	EventID        uuid.UUID
	EventType      string
	Payload        []byte
	Status         string
	Attempts       int
	LastAttemptAt  *time.Time
	NextAttemptAt  *time.Time
	ResponseStatus *int
	ResponseBody   *string
	ErrorMessage   *string
	CreatedAt      time.Time
}

// NextRetryAt is the log's next_retry_at: when a failed delivery is retried automatically; nil
// for a pending, delivered or permanently failed one.
func (d Delivery) NextRetryAt() *time.Time {
	if d.Status != StatusFailed {
		return nil
	}
	return d.NextAttemptAt
}

// Claim is a delivery leased to one attempt, with what the attempt needs of its endpoint.
type Claim struct {
	Delivery
	Token        uuid.UUID
	URL          string
	Enabled      bool
	SecretSealed []byte
	// ClaimedAt is this process's clock (with its monotonic reading) taken just before the
	// statement that took the lease was sent: the lease lasts at least until ClaimedAt plus
	// the lease duration asked for. Zero when unknown.
	ClaimedAt time.Time
}

// Recording is the result of an attempt to record under the lease of its claim.
type Recording struct {
	Claim     Claim
	Attempted Attempted
}

// Target is a company and environment, the scope of one endpoint.
type Target struct {
	CompanyID   string
	Environment string
}

// NewDelivery is a delivery to create for an event, for every deliverable endpoint of its
// company and environment.
type NewDelivery struct {
	EventID     uuid.UUID
	EventType   string
	CompanyID   string
	Environment string
	Payload     []byte
}

// Advance is where a batch of an event stream takes the intake of some partitions: to Seq of
// Stream, for every one of Partitions, all leased to Member. The deliveries of the batch are
// created only together with it.
type Advance struct {
	Member     string
	Stream     string
	Partitions []int
	Seq        uint64
}
