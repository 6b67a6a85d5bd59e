package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/payplat/platform/pkg/validation"
)

// KeyKind says what an API key may do: secret keys work on every management and dashboard
// route, publishable keys (meant to ship inside partner apps) only on the few routes that accept
// them.
type KeyKind string

// The key kinds.
const (
	Secret      KeyKind = "secret"
	Publishable KeyKind = "publishable"
)

// Environment separates test data from live data. A key addresses exactly one.
type Environment string

// The environments.
const (
	Test Environment = "test"
	Live Environment = "live"
)

// KeyType is the kind and environment of a key, written as its prefix: sk_test, sk_live,
// pk_test, pk_live.
type KeyType struct {
	Kind        KeyKind
	Environment Environment
}

// KeyTypes lists the four key types, in the order companies receive them.
var KeyTypes = []KeyType{{Secret, Test}, {Secret, Live}, {Publishable, Test}, {Publishable, Live}}

// String returns the type's prefix, for example "sk_test".
func (t KeyType) String() string {
	k := "sk"
	if t.Kind == Publishable {
		k = "pk"
	}
	return k + "_" + string(t.Environment)
}

// ParseKeyType parses "sk_test", "sk_live", "pk_test" or "pk_live".
func ParseKeyType(s string) (KeyType, error) {
	for _, t := range KeyTypes {
		if t.String() == s {
			return t, nil
		}
	}
	return KeyType{}, validation.Invalid("kind_env", "must be one of sk_test, sk_live, pk_test, pk_live")
}

const (
	// keyRandomLen base62 characters carry about 238 bits of entropy.
	keyRandomLen = 40
	// displayRandomLen characters of the random part are kept in clear as a display prefix,
	// so that operators and partners can tell keys apart without the secret.
	displayRandomLen = 4
	base62           = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// keyPattern accepts the key format generously (32 to 128 random characters) so that a future
// change of length does not invalidate issued keys.
var keyPattern = regexp.MustCompile(`^(sk|pk)_(test|live)_[0-9A-Za-z]{32,128}$`)

// APIKey is the stored form of a key: everything but the key itself, of which only a hash is
// kept.
//
// The hash is a plain SHA-256 of the full key. Password hashing functions (bcrypt, argon2) exist
// to slow down guessing of low-entropy secrets chosen by people; these keys are 238 random bits
// from crypto/rand, so a preimage search on SHA-256 is out of reach however fast the hash is.
// A deterministic, fast hash also lets the gateway find a key by its hash with one indexed
// lookup on every request, where a salted slow hash would need a scan or a separate key id.
type APIKey struct {
	id            uuid.UUID
	companyID     uuid.UUID
	keyType       KeyType
	displayPrefix string
	hash          []byte
	createdAt     time.Time
	revokedAt     *time.Time
}

// NewAPIKey generates a key of type t for company with crypto/rand and returns its stored form
// and the key itself, which the caller shows once and never stores.
func NewAPIKey(companyID uuid.UUID, t KeyType, now time.Time) (APIKey, string, error) {
	random, err := randomBase62(keyRandomLen)
	if err != nil {
		return APIKey{}, "", fmt.Errorf("generating api key: %w", err)
	}
	plain := t.String() + "_" + random
	key := APIKey{
		id:            uuid.New(),
		companyID:     companyID,
		keyType:       t,
		displayPrefix: t.String() + "_" + random[:displayRandomLen],
		hash:          HashKey(plain),
		createdAt:     now.UTC().Truncate(time.Microsecond),
	}
	return key, plain, nil
}

// UnmarshalAPIKeyFromDatabase rebuilds a key from its stored fields.
func UnmarshalAPIKeyFromDatabase(id, companyID uuid.UUID, t KeyType, displayPrefix string,
	hash []byte, createdAt time.Time, revokedAt *time.Time) APIKey {
	return APIKey{id: id, companyID: companyID, keyType: t, displayPrefix: displayPrefix,
		hash: hash, createdAt: createdAt.UTC(), revokedAt: revokedAt}
}

// ParseKey checks the format of a presented key and returns its type. It says nothing about
// whether the key exists.
func ParseKey(raw string) (KeyType, error) {
	m := keyPattern.FindStringSubmatch(raw)
	if m == nil {
		return KeyType{}, ErrUnauthorized
	}
	kind := Secret
	if m[1] == "pk" {
		kind = Publishable
	}
	return KeyType{Kind: kind, Environment: Environment(m[2])}, nil
}

// HashKey returns the SHA-256 of the full key, the only form in which keys are stored.
func HashKey(raw string) []byte {
	sum := sha256.Sum256([]byte(raw))
	return sum[:]
}

// Authenticate returns the principal of this key when hash (of the presented key) matches it
// and the key is not revoked; ErrUnauthorized otherwise. The hash comparison is constant-time.
func (k APIKey) Authenticate(hash []byte) (Principal, error) {
	if subtle.ConstantTimeCompare(k.hash, hash) != 1 || k.revokedAt != nil {
		return Principal{}, ErrUnauthorized
	}
	return Principal{
		CompanyID:   k.companyID,
		Environment: k.keyType.Environment,
		KeyKind:     k.keyType.Kind,
		KeyID:       k.id,
	}, nil
}

// ID returns the key's id.
func (k APIKey) ID() uuid.UUID { return k.id }

// CompanyID returns the id of the company the key belongs to.
func (k APIKey) CompanyID() uuid.UUID { return k.companyID }

// Type returns the key's kind and environment.
func (k APIKey) Type() KeyType { return k.keyType }

// DisplayPrefix returns the non-secret start of the key, for example "sk_test_a1B2".
func (k APIKey) DisplayPrefix() string { return k.displayPrefix }

// Hash returns the SHA-256 of the key.
func (k APIKey) Hash() []byte { return k.hash }

// CreatedAt returns when the key was issued.
func (k APIKey) CreatedAt() time.Time { return k.createdAt }

// RevokedAt returns when the key was revoked, or nil while it is active.
func (k APIKey) RevokedAt() *time.Time { return k.revokedAt }

// randomBase62 returns n characters drawn uniformly from base62 with crypto/rand. Bytes of 248
// and above are rejected so that every character is equally likely (248 = 4 * 62).
func randomBase62(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out), nil
}
