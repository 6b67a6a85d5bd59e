package domain

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
)

// Errors of the payment endpoints; the error table of ports/errors.go maps them to HTTP.
var (
	// ErrMerchantNotActive: a payment for a merchant that is not ACTIVE (403 MERCHANT_NOT_ACTIVE).
	ErrMerchantNotActive = errors.New("the merchant is not ACTIVE and cannot receive payments")
	// ErrPaymentTestModeOnly: payment simulation with a live key (403 TEST_MODE_ONLY).
	ErrPaymentTestModeOnly = errors.New("payment simulation is only available with test keys")
	// ErrPaymentsUnavailable: the bus is unreachable, or the payment was published but the
	// payments projection did not show it in time (503); a retry with the same
	// Idempotency-Key publishes nothing new and waits again.
	ErrPaymentsUnavailable = errors.New("payments are unavailable")
)

// Payment statuses of the API (SPEC §3.2, DESIGN §4).
const (
	PaymentPending   = "PENDING"
	PaymentConfirmed = "CONFIRMED"
	PaymentFailed    = "FAILED"
)

// Payment expiry bounds of POST /api/v1/payments/process (DESIGN §5).
const (
	PaymentDefaultExpiry = 15 * time.Minute
	PaymentMinExpiry     = 60 * time.Second
	PaymentMaxExpiry     = 24 * time.Hour
)

// Payment is a payment as the API shows it (SPEC §2.7).
type Payment struct {
	ID           string
	Status       string
	Amount       string
	Currency     string
	MerchantID   string
	MerchantName string
	TxHash       string
	CreatedAt    time.Time
	ExpiresAt    *time.Time
	ConfirmedAt  *time.Time
	// Created says whether the projection has applied the payment's payment.created, the only
	// event carrying expires_at: a row built from later events alone is not yet complete.
	Created bool
}

// PaymentFilter selects a page of the payments list (SPEC §4.7).
type PaymentFilter struct {
	// Status is PENDING, CONFIRMED, FAILED, or empty for all.
	Status string
	Limit  int
	Offset int
}

// PaymentRequest is a payment to create for a merchant.
type PaymentRequest struct {
	MerchantID string
	// Amount is the USDC decimal string, already validated.
	Amount    string
	ExpiresIn time.Duration
}

// NewPaymentRequest validates the amount (required, a positive USDC amount with at most 6
// decimals) and the expiry (60 s to 24 h, PaymentDefaultExpiry when nil) of a payment for
// merchantID; the errors name the request's fields.
func NewPaymentRequest(merchantID string, amount *string, expiresInSeconds *int64) (PaymentRequest, error) {
	req := PaymentRequest{MerchantID: merchantID, ExpiresIn: PaymentDefaultExpiry}
	if amount == nil {
		return PaymentRequest{}, validation.Invalid("amount", "is required")
	}
	a, err := money.Parse(*amount)
	if err != nil || !a.IsPositive() {
		return PaymentRequest{}, validation.Invalid("amount", "must be a positive USDC amount with at most 6 decimals, for example \"12.50\"")
	}
	if money.CheckAmount(a) != nil {
		return PaymentRequest{}, validation.Invalid("amount", AboveMaxAmount)
	}
	req.Amount = a.String()
	if expiresInSeconds != nil {
		if *expiresInSeconds < int64(PaymentMinExpiry/time.Second) || *expiresInSeconds > int64(PaymentMaxExpiry/time.Second) {
			return PaymentRequest{}, validation.Invalid("expires_in_seconds", "must be a whole number from 60 to 86400")
		}
		req.ExpiresIn = time.Duration(*expiresInSeconds) * time.Second
	}
	return req, nil
}

// PaymentMerchant is the merchant a payment is for, as its admission found it, with its balance
// and the balance of its company's pool.
type PaymentMerchant struct {
	ID            string
	Name          string
	WalletAddress string
	Status        string
	Balance       money.Amount
	PoolBalance   money.Amount
}

// Within returns a validation error naming amount when a payment of req would take the
// merchant's balance or the pool's past the platform's balance limit (±money.MaxBalance): the
// merchant ledger and the pool would refuse its confirmation. Checked at admission, so that
// the partner is told at once instead of the payment being set aside for an operator; a payment
// that passes here but loses a race to the limit is set aside by the consumer that cannot apply
// it (docs/RELIABILITY.md, "Limits").
func (m PaymentMerchant) Within(req PaymentRequest) error {
	a, err := money.Parse(req.Amount)
	if err != nil {
		return validation.Invalid("amount", err.Error())
	}
	if _, err := money.Move(m.Balance, a); err != nil {
		return validation.Invalid("amount", "would take the merchant's balance past the platform's limit of "+
			money.MaxBalance.String()+" USDC")
	}
	neg, _ := a.Neg()
	if _, err := money.Move(m.PoolBalance, neg); err != nil {
		return validation.Invalid("amount", "would take the pool's balance past the platform's limit of -"+
			money.MaxBalance.String()+" USDC")
	}
	return nil
}

// Payable returns ErrMerchantNotActive unless the merchant is ACTIVE: only an ACTIVE merchant
// receives payments (SPEC §3.1).
func (m PaymentMerchant) Payable() error {
	if m.Status != MerchantActive {
		return ErrMerchantNotActive
	}
	return nil
}

// PaymentEventKind is an event of a payment's life that the gateway publishes.
type PaymentEventKind string

// The events the gateway publishes: payment.created for every payment, payment.processing and
// payment.confirmed after it for a simulated one.
const (
	PaymentCreatedEvent    PaymentEventKind = "created"
	PaymentProcessingEvent PaymentEventKind = "processing"
	PaymentConfirmedEvent  PaymentEventKind = "confirmed"
)

// PaymentEvent is an event of a payment as the gateway publishes it to the PAYMENTS stream
// (the adapters encode it as the payplat.payment.v1 message of its Kind).
type PaymentEvent struct {
	Kind PaymentEventKind
	// ID is the event id, on which the bus and every consumer drop duplicates.
	ID          string
	CompanyID   uuid.UUID
	Environment Environment
	// CausationID is the id of the request that caused the event, or empty.
	CausationID string
	// At is when the event happened, and the payment's created_at (created) or confirmed_at
	// (confirmed).
	At             time.Time
	PaymentID      string
	MerchantID     string
	MerchantWallet string
	Amount         string
	// Status is the payment's status the event reports: PENDING, PROCESSING or CONFIRMED.
	Status string
	// ExpiresAt is when the payment expires unpaid (created only).
	ExpiresAt time.Time
	// CustomerWallet and TxHash are the paying wallet and its transaction (processing and
	// confirmed only).
	CustomerWallet string
	TxHash         string
	// ExplorerURL shows the transaction on a block explorer (confirmed only).
	ExplorerURL string
}

// AboveMaxAmount is the message of an amount above the platform's maximum for one operation
// (money.MaxAmount): a payment, a deposit or a low-balance threshold.
var AboveMaxAmount = "must be at most " + money.MaxAmount.String() + " USDC, the largest amount of one operation"
