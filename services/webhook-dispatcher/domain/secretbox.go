package domain

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrBadSecretKey is returned for a WEBHOOK_SECRET_KEY that is not 32 bytes in hex or base64.
var ErrBadSecretKey = errors.New("WEBHOOK_SECRET_KEY must be 32 bytes, as 64 hex characters or base64")

// SecretBox seals signing secrets at rest with AES-256-GCM. The additional data binds a sealed
// secret to its company and environment, so a row copied onto another endpoint does not open.
type SecretBox struct {
	aead cipher.AEAD
}

// ParseSecretKey decodes WEBHOOK_SECRET_KEY: 64 hex characters, or standard or URL-safe base64
// (padded or not), of exactly 32 bytes.
func ParseSecretKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 64 {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, ErrBadSecretKey
}

// NewSecretBox returns a box for a 32-byte key.
func NewSecretBox(key []byte) (*SecretBox, error) {
	if len(key) != 32 {
		return nil, ErrBadSecretKey
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts secret for the endpoint of company and env: a random nonce || ciphertext.
func (b *SecretBox) Seal(company, env, secret string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("sealing webhook secret: %w", err)
	}
	return b.aead.Seal(nonce, nonce, []byte(secret), additionalData(company, env)), nil
}

// Open decrypts what Seal returned for the same company and env.
func (b *SecretBox) Open(company, env string, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("opening webhook secret: sealed value too short")
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], additionalData(company, env))
	if err != nil {
		return "", fmt.Errorf("opening webhook secret (wrong WEBHOOK_SECRET_KEY?): %w", err)
	}
	return string(plain), nil
}

func additionalData(company, env string) []byte {
	return []byte("payplat-webhook-secret\x00" + company + "\x00" + env)
}
