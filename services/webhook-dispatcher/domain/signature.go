package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as in the Standard Webhooks specification.
const SecretPrefix = "whsec_"

// secretBytes is the length of the random key inside a signing secret.
const secretBytes = 32

// UserAgent is the User-Agent of every delivery (SPEC 6.2: a product token + "-Webhook/1.0").
const UserAgent = "Payplat-Webhook/1.0"

// Delivery headers (SPEC 6.2, plus a stable id and the Standard Webhooks set).
const (
	HeaderSignature = "X-Webhook-Signature"
	HeaderTimestamp = "X-Webhook-Timestamp"
	HeaderEvent     = "X-Webhook-Event"
	HeaderID        = "X-Webhook-Id"

	HeaderStdID        = "webhook-id"
	HeaderStdTimestamp = "webhook-timestamp"
	HeaderStdSignature = "webhook-signature"
)

// NewSecret returns a fresh signing secret: "whsec_" + the standard base64 of 32 random bytes.
func NewSecret() (string, error) {
	k := make([]byte, secretBytes)
	if _, err := rand.Read(k); err != nil {
		return "", fmt.Errorf("generating a webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(k), nil
}

// Signature is the X-Webhook-Signature of SPEC 6.2: the hex HMAC-SHA256 of the raw body, keyed
// with the secret exactly as shown to the company (the whole "whsec_..." string, as bytes), so
// that `hmac(secret, body)` in any language verifies it.
func Signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// StandardSignature is the Standard Webhooks webhook-signature value: "v1," + the base64
// HMAC-SHA256 of "<id>.<unix seconds>.<body>", keyed with the bytes the secret's base64 part
// decodes to (the standard's whsec_ convention, which its libraries implement).
func StandardSignature(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return "", fmt.Errorf("webhook secret is not whsec_<base64>: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// Headers returns every header of one attempt of delivery id with body, dispatched at now.
func Headers(secret, id, eventType string, now time.Time, body []byte) (map[string]string, error) {
	std, err := StandardSignature(secret, id, now, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"Content-Type":     "application/json",
		"User-Agent":       UserAgent,
		HeaderSignature:    Signature(secret, body),
		HeaderTimestamp:    now.UTC().Format(TimeLayout),
		HeaderEvent:        eventType,
		HeaderID:           id,
		HeaderStdID:        id,
		HeaderStdTimestamp: strconv.FormatInt(now.Unix(), 10),
		HeaderStdSignature: std,
	}, nil
}
