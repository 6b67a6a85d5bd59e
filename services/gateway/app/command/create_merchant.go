package command

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// CreateMerchant creates a merchant, with a wallet of its own, for the caller's company in its
// key's environment.
type CreateMerchant struct {
	Principal domain.Principal
	// RequestID is recorded by the merchant service as the command's correlation id.
	RequestID string
	Name      string
	Email     string
	// Caller names who calls (the Idempotency-Key scope) and IdempotencyKey is the request's key,
	// or empty.
	Caller         string
	IdempotencyKey string
}

// MerchantCreator asks the merchant service to create a merchant; merchantID, when set, is the
// new merchant's id, so that a repeat of the request returns the same merchant.
type MerchantCreator interface {
	Create(ctx context.Context, p domain.Principal, requestID, merchantID, name, email string) (domain.MerchantCreated, error)
}

// CreateMerchantHandler runs CreateMerchant.
type CreateMerchantHandler struct {
	merchants MerchantCreator
}

// NewCreateMerchantHandler returns a CreateMerchantHandler creating through merchants.
func NewCreateMerchantHandler(merchants MerchantCreator) CreateMerchantHandler {
	return CreateMerchantHandler{merchants: merchants}
}

// merchantIDSpace is the UUIDv5 namespace of merchant ids derived from Idempotency-Keys.
var merchantIDSpace = uuid.MustParse("6f1d3c2e-8a4b-5c7d-9e0f-1a2b3c4d5e6f")

// Handle creates the merchant. Under an Idempotency-Key the merchant id derives from the caller
// and the key, so a retry after a 5xx (which the idempotency layer does not store) cannot create
// a second merchant; the merchant service validates name and email.
func (h CreateMerchantHandler) Handle(ctx context.Context, cmd CreateMerchant) (domain.MerchantCreated, error) {
	merchantID := ""
	if cmd.IdempotencyKey != "" {
		merchantID = uuid.NewSHA1(merchantIDSpace, []byte(cmd.Caller+"\x00"+cmd.IdempotencyKey)).String()
	}
	return h.merchants.Create(ctx, cmd.Principal, cmd.RequestID, merchantID, cmd.Name, cmd.Email)
}
