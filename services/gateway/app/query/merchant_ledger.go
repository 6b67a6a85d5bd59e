package query

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// MerchantLedger asks for the newest entries of one of the caller's merchants' ledger.
type MerchantLedger struct {
	Principal  domain.Principal
	MerchantID string
	// Limit is the most entries answered (the ports bound it to 1–100).
	Limit int
}

// MerchantLedgerReader reads up to limit entries of a merchant's ledger, newest first, with the
// total count; domain.ErrNotFound unless the merchant is the company's in env (an id that is not
// a UUID included).
type MerchantLedgerReader interface {
	Ledger(ctx context.Context, companyID uuid.UUID, env domain.Environment, merchantID string,
		limit int) (domain.MerchantLedger, error)
}

// MerchantLedgerHandler reads a merchant's ledger.
type MerchantLedgerHandler struct {
	merchants MerchantLedgerReader
}

// NewMerchantLedgerHandler returns a MerchantLedgerHandler reading through merchants.
func NewMerchantLedgerHandler(merchants MerchantLedgerReader) MerchantLedgerHandler {
	return MerchantLedgerHandler{merchants: merchants}
}

// Handle returns the page of the ledger; another company's or environment's merchant is
// domain.ErrNotFound.
func (h MerchantLedgerHandler) Handle(ctx context.Context, q MerchantLedger) (domain.MerchantLedger, error) {
	return h.merchants.Ledger(ctx, q.Principal.CompanyID, q.Principal.Environment, q.MerchantID, q.Limit)
}
