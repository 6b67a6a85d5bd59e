// Package domain holds the Merchant aggregate: its creation with a provisioned wallet, its
// status machine (SPEC §3.1) and its ledger, each change an event (events.go).
package domain

import (
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
)

// Limits of the merchant's text fields.
const (
	MinNameLength   = 2
	MaxNameLength   = 200
	MaxEmailLength  = 254
	MaxReasonLength = 500
)

// Merchant is the aggregate. Its state is a fold of its events (Apply); Version is the number
// of events applied, the stream version the next append expects.
type Merchant struct {
	id        uuid.UUID
	profile   Profile
	status    Status
	balance   money.Amount
	version   int64
	createdAt time.Time
	updatedAt time.Time
}

// Profile is what a merchant is created with and keeps for life: its company and environment,
// its name and email, and its wallet.
type Profile struct {
	CompanyID     string
	Environment   string
	Name          string
	Email         string
	WalletAddress string
	WalletUserID  string
}

// NewMerchantParams are the inputs of a merchant creation.
type NewMerchantParams struct {
	ID uuid.UUID
	Profile
}

// ValidateNew checks the name and email of a merchant to be created (before a wallet is
// provisioned for it) and returns them normalised (name trimmed).
func ValidateNew(name, email string) (string, string, error) {
	if err := storable("name", name); err != nil {
		return "", "", err
	}
	if err := storable("email", email); err != nil {
		return "", "", err
	}
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n < MinNameLength {
		return "", "", validation.Invalid("name", fmt.Sprintf("must be at least %d characters", MinNameLength))
	} else if n > MaxNameLength {
		return "", "", validation.Invalid("name", fmt.Sprintf("must be at most %d characters", MaxNameLength))
	}
	if !ValidEmail(email) {
		return "", "", validation.Invalid("email", "must be a valid email address")
	}
	return name, email, nil
}

// ValidEmail reports whether s is a bare email address (no display name, no spaces).
func ValidEmail(s string) bool {
	if s == "" || len(s) > MaxEmailLength || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && strings.Contains(domain, ".") && !strings.HasSuffix(domain, ".")
}

// storable refuses text that PostgreSQL's text type cannot hold (the NUL character, invalid
// UTF-8), naming field: checked before a wallet is provisioned or anything appended, where it
// would otherwise fail the append as an internal error.
func storable(field, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return validation.Invalid(field, "must not contain the NUL character (U+0000)")
	}
	if !utf8.ValidString(v) {
		return validation.Invalid(field, "must be valid UTF-8")
	}
	return nil
}

// EmailKey is the form of an email that uniqueness is decided on: case-insensitive.
func EmailKey(email string) string { return strings.ToLower(email) }

// Create decides the creation of a merchant: it returns its Created event.
func Create(p NewMerchantParams, now time.Time) (Created, error) {
	name, email, err := ValidateNew(p.Name, p.Email)
	if err != nil {
		return Created{}, err
	}
	switch {
	case p.ID == uuid.Nil:
		return Created{}, validation.Invalid("id", "is required")
	case p.CompanyID == "":
		return Created{}, validation.Invalid("company_id", "is required")
	case p.Environment != "test" && p.Environment != "live":
		return Created{}, validation.Invalid("environment", "must be test or live")
	case p.WalletAddress == "" || p.WalletUserID == "":
		return Created{}, validation.Invalid("wallet", "wallet address and wallet user id are required")
	}
	c := Created{MerchantID: p.ID, Profile: p.Profile, At: now.UTC()}
	c.Name, c.Email = name, email
	return c, nil
}

// ChangeStatus decides a status change requested by actor. It returns nil (and no error) when
// the merchant already has the status: nothing changes and no event is recorded. A company may
// only request ACTIVE or PAUSED, and never changes a FROZEN, BLACKLISTED or SUSPENDED merchant
// (ErrStatusLocked); the platform may set any status.
func (m *Merchant) ChangeStatus(actor Actor, to Status, reason string, now time.Time) (*StatusChanged, error) {
	if utf8.RuneCountInString(reason) > MaxReasonLength {
		return nil, validation.Invalid("reason", fmt.Sprintf("must be at most %d characters", MaxReasonLength))
	}
	if err := storable("reason", reason); err != nil {
		return nil, err
	}
	switch actor {
	case ActorCompany:
		if !to.CompanySettable() {
			return nil, validation.Invalid("status", "must be ACTIVE or PAUSED")
		}
		if m.status.Locked() {
			return nil, ErrStatusLocked
		}
	case ActorPlatform:
		if _, err := ParseStatus(string(to)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown actor %q", actor)
	}
	if to == m.status {
		return nil, nil
	}
	return &StatusChanged{MerchantID: m.id, From: m.status, To: to, Actor: actor, Reason: reason, At: now.UTC()}, nil
}

// RecordEntry decides a ledger entry: the merchant's balance before it and after it. amount is
// signed (negative for money leaving the wallet). Facts observed on chain are recorded even
// when they take the balance below zero.
func (m *Merchant) RecordEntry(e NewEntry, now time.Time) (LedgerEntryRecorded, error) {
	if err := e.validate(); err != nil {
		return LedgerEntryRecorded{}, err
	}
	// The platform's limits (money.MaxAmount, money.MaxBalance): an entry beyond them is
	// refused before anything is written, and no retry can change that.
	after, err := money.Move(m.balance, e.Amount)
	if err != nil {
		return LedgerEntryRecorded{}, fmt.Errorf("%w: ledger entry of %s: %w", ErrLimit, e.Amount, err)
	}
	return LedgerEntryRecorded{EntryID: e.ID, MerchantID: m.id, Type: e.Type, Amount: e.Amount,
		BalanceBefore: m.balance, BalanceAfter: after, PaymentID: e.PaymentID, TxHash: e.TxHash,
		Status: EntryCompleted, Description: e.Description, At: now.UTC()}, nil
}

// RecordEntries decides several ledger entries in a row without changing m: each entry's
// balance_before is the previous one's balance_after.
func (m *Merchant) RecordEntries(es []NewEntry, now time.Time) ([]LedgerEntryRecorded, error) {
	next := *m
	out := make([]LedgerEntryRecorded, 0, len(es))
	for _, e := range es {
		rec, err := next.RecordEntry(e, now)
		if err != nil {
			return nil, err
		}
		next.balance = rec.BalanceAfter
		out = append(out, rec)
	}
	return out, nil
}

// Apply folds an event into the state.
func (m *Merchant) Apply(ev Event) error {
	switch e := ev.(type) {
	case Created:
		if m.version != 0 {
			return fmt.Errorf("merchant %s: created twice", e.MerchantID)
		}
		*m = Merchant{id: e.MerchantID, profile: e.Profile, status: StatusActive, createdAt: e.At, updatedAt: e.At}
	case StatusChanged:
		if m.version == 0 {
			return fmt.Errorf("merchant %s: status change before creation", e.MerchantID)
		}
		m.status, m.updatedAt = e.To, e.At
	case LedgerEntryRecorded:
		if m.version == 0 {
			return fmt.Errorf("merchant %s: ledger entry before creation", e.MerchantID)
		}
		m.balance = e.BalanceAfter
	default:
		return fmt.Errorf("unknown merchant event %T", ev)
	}
	m.version++
	return nil
}

// Rehydrate rebuilds a merchant from its events, in stream order.
func Rehydrate(evs []Event) (*Merchant, error) {
	m := &Merchant{}
	for _, e := range evs {
		if err := m.Apply(e); err != nil {
			return nil, err
		}
	}
	if m.version == 0 {
		return nil, ErrNotFound
	}
	return m, nil
}

// Snapshot is the state of a merchant at a version, as the read table keeps it; Restore turns
// it back into the aggregate without replaying the stream.
type Snapshot struct {
	ID uuid.UUID
	Profile
	Status    Status
	Balance   money.Amount
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Restore returns the merchant of a snapshot.
func Restore(s Snapshot) *Merchant {
	return &Merchant{id: s.ID, profile: s.Profile, status: s.Status, balance: s.Balance, version: s.Version,
		createdAt: s.CreatedAt, updatedAt: s.UpdatedAt}
}

// Snapshot returns the merchant's state.
func (m *Merchant) Snapshot() Snapshot {
	return Snapshot{ID: m.id, Profile: m.profile, Status: m.status, Balance: m.balance, Version: m.version,
		CreatedAt: m.createdAt, UpdatedAt: m.updatedAt}
}

// ID returns the merchant id.
func (m *Merchant) ID() uuid.UUID { return m.id }

// CompanyID returns the owning company.
func (m *Merchant) CompanyID() string { return m.profile.CompanyID }

// Environment returns test or live.
func (m *Merchant) Environment() string { return m.profile.Environment }

// Name returns the merchant's name.
func (m *Merchant) Name() string { return m.profile.Name }

// Status returns the current status.
func (m *Merchant) Status() Status { return m.status }

// Balance returns the current balance.
func (m *Merchant) Balance() money.Amount { return m.balance }

// Version returns the number of events the state folds.
func (m *Merchant) Version() int64 { return m.version }

// UpdatedAt returns the time of the last status change (the creation time before any).
func (m *Merchant) UpdatedAt() time.Time { return m.updatedAt }
