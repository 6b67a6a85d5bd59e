package adapters

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// idempotencySecrets are derived from a caller's Idempotency-Key and the gateway's
// IDEMPOTENCY_SECRET: the id under which the key is stored, and the AES-256-GCM key that seals
// the stored response. Someone reading the table (a backup, a replica, a role with SELECT) sees
// neither the Idempotency-Key nor the responses (which may hold API keys and webhook signing
// secrets): guessing an Idempotency-Key is not enough, the server secret is needed too. It is
// HKDF's salt, so the extraction step is HMAC-SHA256 keyed with it.
type idempotencySecrets struct {
	id   []byte
	aead cipher.AEAD
}

func deriveIdempotencySecrets(serverSecret []byte, scope, key string) (idempotencySecrets, error) {
	if len(serverSecret) == 0 {
		return idempotencySecrets{}, errors.New("deriving idempotency keys: no IDEMPOTENCY_SECRET")
	}
	id, err := hkdf.Key(sha256.New, []byte(key), serverSecret, "payplat idempotency id\x00"+scope, 32)
	if err != nil {
		return idempotencySecrets{}, fmt.Errorf("deriving idempotency id: %w", err)
	}
	enc, err := hkdf.Key(sha256.New, []byte(key), serverSecret, "payplat idempotency seal\x00"+scope, 32)
	if err != nil {
		return idempotencySecrets{}, fmt.Errorf("deriving idempotency seal key: %w", err)
	}
	block, err := aes.NewCipher(enc)
	if err != nil {
		return idempotencySecrets{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return idempotencySecrets{}, err
	}
	return idempotencySecrets{id: id, aead: aead}, nil
}

// seal encrypts body, bound to the key's id, as nonce || ciphertext.
func (s idempotencySecrets) seal(body []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("generating nonce: %w", err)
	}
	return s.aead.Seal(nonce, nonce, body, s.id), nil
}

func (s idempotencySecrets) open(sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("stored idempotent response is truncated")
	}
	body, err := s.aead.Open(nil, sealed[:n], sealed[n:], s.id)
	if err != nil {
		return nil, fmt.Errorf("opening stored idempotent response: %w", err)
	}
	return body, nil
}
