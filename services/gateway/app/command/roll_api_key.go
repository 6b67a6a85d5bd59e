package command

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// RollAPIKey revokes a company's active key of one type and issues a new one.
type RollAPIKey struct {
	CompanyID uuid.UUID
	Type      domain.KeyType
}

// KeyReplacer stores key as the active key of its company and type, revoking the previous one
// in the same transaction; domain.ErrNotFound when the company does not exist.
type KeyReplacer interface {
	ReplaceKey(ctx context.Context, key domain.APIKey) error
}

// RollAPIKeyHandler runs RollAPIKey.
type RollAPIKeyHandler struct {
	repo KeyReplacer
	now  func() time.Time
}

// NewRollAPIKeyHandler returns a RollAPIKeyHandler storing through repo.
func NewRollAPIKeyHandler(repo KeyReplacer) RollAPIKeyHandler {
	return RollAPIKeyHandler{repo: repo, now: time.Now}
}

// Handle generates the new key and swaps it in.
func (h RollAPIKeyHandler) Handle(ctx context.Context, cmd RollAPIKey) (IssuedKey, error) {
	key, plain, err := domain.NewAPIKey(cmd.CompanyID, cmd.Type, h.now())
	if err != nil {
		return IssuedKey{}, err
	}
	if err := h.repo.ReplaceKey(ctx, key); err != nil {
		return IssuedKey{}, fmt.Errorf("replacing %s key: %w", cmd.Type, err)
	}
	return IssuedKey{Key: key, Plain: plain}, nil
}
