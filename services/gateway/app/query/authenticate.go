package query

import (
	"context"
	"errors"
	"fmt"

	"github.com/payplat/platform/services/gateway/domain"
)

// KeyFinder finds a stored key by the SHA-256 of the full key; domain.ErrNotFound when none
// has that hash.
type KeyFinder interface {
	FindKeyByHash(ctx context.Context, hash []byte) (domain.APIKey, error)
}

// AuthenticateHandler turns a presented API key into the principal it stands for.
type AuthenticateHandler struct {
	keys KeyFinder
}

// NewAuthenticateHandler returns an AuthenticateHandler reading through keys.
func NewAuthenticateHandler(keys KeyFinder) AuthenticateHandler {
	return AuthenticateHandler{keys: keys}
}

// Handle returns the principal of raw, or domain.ErrUnauthorized when raw is malformed,
// unknown or revoked (one error for all, so that callers learn nothing about which).
func (h AuthenticateHandler) Handle(ctx context.Context, raw string) (domain.Principal, error) {
	if _, err := domain.ParseKey(raw); err != nil {
		return domain.Principal{}, domain.ErrUnauthorized
	}
	hash := domain.HashKey(raw)
	key, err := h.keys.FindKeyByHash(ctx, hash)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Principal{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.Principal{}, fmt.Errorf("looking up api key: %w", err)
	}
	return key.Authenticate(hash)
}
