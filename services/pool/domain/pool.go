// Package domain is the treasury pool of one company in one environment: its balance, its
// settings and the rules that turn facts into movements and low-balance alerts.
package domain

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
)

// Currency is the currency of every amount of a pool.
const Currency = "USDC"

// DefaultLowThreshold is the low-balance threshold of a pool whose company never set one:
// 100.00 USDC. A new pool (balance 0.00) is therefore low from the start, without an alert,
// since no balance ever crossed the threshold.
var DefaultLowThreshold = money.MustParse("100.00")

// ID names a pool: a company and an environment ("test" or "live").
type ID struct {
	CompanyID   string
	Environment string
}

// NewID validates a pool id.
func NewID(companyID, environment string) (ID, error) {
	if !events.IsToken(companyID) {
		return ID{}, fmt.Errorf("%w: company id %q", ErrInvalidPool, companyID)
	}
	if environment != "test" && environment != "live" {
		return ID{}, fmt.Errorf("%w: environment %q", ErrInvalidPool, environment)
	}
	return ID{CompanyID: companyID, Environment: environment}, nil
}

// StreamID is the event-store stream of the pool.
func (id ID) StreamID() string { return "pool-" + id.Environment + "-" + id.CompanyID }

// Settings are what the company configures on its pool.
type Settings struct {
	LowThreshold     money.Amount
	AutoTopUpEnabled bool
}

// DefaultSettings are the settings of a pool before any change.
func DefaultSettings() Settings { return Settings{LowThreshold: DefaultLowThreshold} }

// Pool is the aggregate. Its balance may go below zero: it records on-chain facts it cannot
// refuse.
type Pool struct {
	id       ID
	balance  money.Amount
	settings Settings
	version  int64
	changes  []Change
}

// New returns the pool of id as it is before its first event.
func New(id ID) *Pool { return &Pool{id: id, settings: DefaultSettings()} }

// Restore rebuilds a pool from a snapshot taken at stream version version.
func Restore(id ID, balance money.Amount, settings Settings, version int64) *Pool {
	return &Pool{id: id, balance: balance, settings: settings, version: version}
}

// ID returns the pool's id.
func (p *Pool) ID() ID { return p.id }

// Balance returns the current balance.
func (p *Pool) Balance() money.Amount { return p.balance }

// Settings returns the current settings.
func (p *Pool) Settings() Settings { return p.settings }

// Version is the stream version of the last event applied, including pending changes.
func (p *Pool) Version() int64 { return p.version }

// IsLow reports whether the balance is below the low threshold.
func (p *Pool) IsLow() bool { return p.balance.Cmp(p.settings.LowThreshold) < 0 }

// Changes returns the changes recorded since the pool was loaded, in order.
func (p *Pool) Changes() []Change { return p.changes }

// Record turns a fact into a movement with id, recorded at now, and alerts if the movement
// takes the pool below its threshold.
func (p *Pool) Record(f Fact, id uuid.UUID, now time.Time) (*Movement, error) {
	if !f.Amount.IsPositive() {
		return nil, fmt.Errorf("%w: %s amount %s must be greater than zero", ErrInvalidAmount, f.Type, f.Amount)
	}
	if (f.Type == Debit || f.Type == Credit) && f.Payment == nil {
		return nil, fmt.Errorf("%w: a %s needs its payment", ErrInvalidAmount, f.Type)
	}
	if f.Description == "" || f.Type == Withdrawal {
		f.Description = describe(f)
	}
	signed := f.Amount
	if f.Type.sign() < 0 {
		neg, err := f.Amount.Neg()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrAmountOutOfRange, err)
		}
		signed = neg
	}
	// The platform's limits (money.MaxAmount, money.MaxBalance): a fact beyond them is refused
	// here, before anything is written, the same way whether it came over the bus or from a
	// command, and no retry can change that.
	after, err := money.Move(p.balance, signed)
	if err != nil {
		return nil, fmt.Errorf("%w: %s of %s: %w", ErrAmountOutOfRange, f.Type, f.Amount, err)
	}
	m := &Movement{
		ID: id, Type: f.Type, Key: f.Key, Amount: signed, BalanceBefore: p.balance, BalanceAfter: after,
		Status: Confirmed, TxHash: f.TxHash, Description: f.Description, Payment: f.Payment,
		WithdrawalID: f.WithdrawalID, ToAddress: f.ToAddress, CreatedAt: now, ConfirmedAt: f.ConfirmedAt,
		Cause: f.Cause,
	}
	if m.ConfirmedAt.IsZero() {
		m.ConfirmedAt = now
	}
	p.record(m, now, f.Cause)
	return m, nil
}

// ChangeSettings sets the pool settings; it records nothing when they do not change. A new
// threshold is judged like a movement: if it makes a pool that was not low low, the alert
// fires (the company is told once that it is now below its threshold), and a lower threshold
// that lifts the pool out of low re-arms the alert.
func (p *Pool) ChangeSettings(s Settings, now time.Time, cause Cause) (bool, error) {
	if s.LowThreshold.IsNegative() {
		return false, fmt.Errorf("%w: low threshold %s must not be negative", ErrInvalidAmount, s.LowThreshold)
	}
	if err := money.CheckAmount(s.LowThreshold); err != nil {
		return false, fmt.Errorf("%w: low threshold %w", ErrAmountOutOfRange, err)
	}
	if s == p.settings {
		return false, nil
	}
	p.record(&SettingsChanged{Settings: s, At: now, Cause: cause}, now, cause)
	return true, nil
}

// record applies c and appends it, then the low-balance alert when c turned the pool low.
func (p *Pool) record(c Change, now time.Time, cause Cause) {
	wasLow := p.IsLow()
	p.Apply(c)
	p.changes = append(p.changes, c)
	if !wasLow && p.IsLow() {
		lb := &LowBalance{Balance: p.balance, Threshold: p.settings.LowThreshold, At: now, Cause: cause}
		p.Apply(lb)
		p.changes = append(p.changes, lb)
	}
}

// Apply folds one change into the pool's state; loading a pool from its events is Apply on
// each in order. Every change is one event, so it advances the version by one.
func (p *Pool) Apply(c Change) {
	switch c := c.(type) {
	case *Movement:
		p.balance = c.BalanceAfter
	case *SettingsChanged:
		p.settings = c.Settings
	}
	p.version++
}

// describe is the description of a movement whose fact came without one.
func describe(f Fact) string { return DefaultDescription(f.Type, f.Payment, f.ToAddress) }

// DefaultDescription is the description the pool gives a movement of type t whose fact came
// without one, from its payment (DEBIT, CREDIT) or destination address (WITHDRAWAL). It is a
// pure function of what the movement's event holds, so a projection of the events derives the
// same text.
func DefaultDescription(t MovementType, p *PaymentRef, toAddress string) string {
	switch t {
	case Deposit:
		return "Deposit to the treasury pool"
	case Withdrawal:
		return "Withdrawal to " + toAddress
	case Debit:
		return "Payment " + p.PaymentID + " to " + merchantLabel(p)
	default:
		return "Refund of payment " + p.PaymentID + " (" + merchantLabel(p) + ")"
	}
}

func merchantLabel(p *PaymentRef) string {
	if p.MerchantName != "" {
		return p.MerchantName
	}
	return "merchant " + p.MerchantID
}
