// Package domain holds the payment lifecycle: the precise statuses, their order, and the fold
// that turns a payment's facts (its applied events) into its read-table row.
package domain

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Precise statuses of a payment (webhook payloads carry these; SPEC §6.4).
const (
	StatusCreated    = "CREATED"
	StatusProcessing = "PROCESSING"
	StatusConfirmed  = "CONFIRMED"
	StatusFailed     = "FAILED"
	StatusExpired    = "EXPIRED"
)

// Rank orders the statuses: a payment's status is that of its highest-ranked fact, so a late or
// repeated event never moves it back.
//
// created < expired < processing < failed < confirmed. Expiry ranks below the on-chain facts:
// an expiry is decided off-chain from the clock, while processing, failed and confirmed report
// what the chain did; when a customer's transaction was submitted just before the deadline
// (its payment.processing still on the bus while the expiry fired), the chain wins and the
// payment shows the on-chain outcome. Confirmed outranks failed so that the rare pair of both
// has one answer in any delivery order (payment.confirmed is the definitive success signal,
// and the pool and ledger act on it).
func Rank(status string) int {
	switch status {
	case StatusCreated:
		return 1
	case StatusExpired:
		return 2
	case StatusProcessing:
		return 3
	case StatusFailed:
		return 4
	case StatusConfirmed:
		return 5
	}
	return 0
}

// PublicStatus is the status the API shows (DESIGN §4): PENDING for created and processing,
// FAILED for failed and expired.
func PublicStatus(status string) string {
	switch status {
	case StatusConfirmed:
		return "CONFIRMED"
	case StatusFailed, StatusExpired:
		return "FAILED"
	}
	return "PENDING"
}

// Key identifies a payment: payment ids are unique within a company and environment, and an
// event of one tenant can never touch another tenant's payment.
type Key struct {
	CompanyID   string
	Environment string
	PaymentID   string
}

// Due is a PENDING payment past its deadline, as the expiry claims it.
type Due struct {
	Key          Key
	MerchantID   string
	AmountMicros int64
	ExpiresAt    time.Time
}

// Less orders keys, so that transactions lock payments in one order.
func (k Key) Less(o Key) bool {
	return k.Compare(o) < 0
}

// Compare compares keys field by field.
func (k Key) Compare(o Key) int {
	if c := strings.Compare(k.CompanyID, o.CompanyID); c != 0 {
		return c
	}
	if c := strings.Compare(k.Environment, o.Environment); c != 0 {
		return c
	}
	return strings.Compare(k.PaymentID, o.PaymentID)
}

// Details are the fields a payment event may carry and its row keeps: each is empty until an
// event carries it.
type Details struct {
	MerchantID       string
	MerchantWallet   string
	CustomerWallet   string
	AmountMicros     int64
	TxHash           string
	BlockExplorerURL string
	ErrorMessage     string
	ExpiresAt        *time.Time
	ConfirmedAt      *time.Time
	ExpiredAt        *time.Time
}

// override sets every field that o carries (a non-empty one) to o's value.
func (d *Details) override(o Details) {
	setString(&d.MerchantID, o.MerchantID)
	setString(&d.MerchantWallet, o.MerchantWallet)
	setString(&d.CustomerWallet, o.CustomerWallet)
	setString(&d.TxHash, o.TxHash)
	setString(&d.BlockExplorerURL, o.BlockExplorerURL)
	setString(&d.ErrorMessage, o.ErrorMessage)
	if o.AmountMicros != 0 {
		d.AmountMicros = o.AmountMicros
	}
	setTime(&d.ExpiresAt, o.ExpiresAt)
	setTime(&d.ConfirmedAt, o.ConfirmedAt)
	setTime(&d.ExpiredAt, o.ExpiredAt)
}

// Fact is one applied payment event, with the details it carries.
type Fact struct {
	Key
	Details
	EventID    uuid.UUID
	Status     string
	CreatedAt  *time.Time
	OccurredAt time.Time
}

// Payment is a payment's row in the read table.
type Payment struct {
	Key
	Details
	Status     string
	HasCreated bool
	CreatedAt  time.Time
}

// Fold computes a payment from all its facts (at least one). The facts are sorted by rank,
// then event id, and each non-empty field of a later fact overrides the earlier value: every
// field ends up with the value of the highest-ranked fact that carries it, whatever order the
// facts arrived in, so a payment whose events came late, twice or out of order gets the same
// row as one whose events came once and in order.
func Fold(facts []Fact) Payment {
	return FoldSorted(SortFacts(facts))
}

// FoldSorted is Fold of facts already in SortFacts order (at least one), for callers that need
// the sorted facts too.
func FoldSorted(sorted []Fact) Payment {
	p := Payment{Key: sorted[0].Key, CreatedAt: sorted[0].OccurredAt}
	for _, f := range sorted {
		p.Status = f.Status
		p.Details.override(f.Details)
		if f.CreatedAt != nil {
			p.HasCreated, p.CreatedAt = true, *f.CreatedAt
		} else if !p.HasCreated && f.OccurredAt.Before(p.CreatedAt) {
			p.CreatedAt = f.OccurredAt
		}
	}
	return p
}

// SortFacts returns the facts sorted by rank, then event id (the order Fold applies them in),
// without the repeats of an event id (a redelivered event is one fact). The argument is not
// changed.
func SortFacts(facts []Fact) []Fact {
	sorted := slices.Clone(facts)
	slices.SortFunc(sorted, compareFacts)
	return slices.CompactFunc(sorted, func(a, b Fact) bool { return a.EventID == b.EventID })
}

func compareFacts(a, b Fact) int {
	if d := Rank(a.Status) - Rank(b.Status); d != 0 {
		return d
	}
	// Byte order is the order of the ids' text (lower-case hex).
	return bytes.Compare(a.EventID[:], b.EventID[:])
}

func setString(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func setTime(dst **time.Time, v *time.Time) {
	if v != nil {
		t := *v
		*dst = &t
	}
}
