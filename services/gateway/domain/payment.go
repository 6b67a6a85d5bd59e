package domain

import (
	"errors"
	"time"
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
	// PaymentID is the id to use (derived from the Idempotency-Key so that a retry is the same
	// payment), or empty for a new one.
	PaymentID  string
	MerchantID string
	// Amount is the USDC decimal string, already validated.
	Amount    string
	ExpiresIn time.Duration
}

// PaymentMerchant is the ACTIVE merchant a payment is for.
type PaymentMerchant struct {
	ID            string
	Name          string
	WalletAddress string
}
