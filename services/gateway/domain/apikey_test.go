package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

func TestNewAPIKeyFormatAndUniqueness(t *testing.T) {
	t.Parallel()
	company := uuid.New()
	seen := map[string]bool{}
	for _, kt := range domain.KeyTypes {
		for range 200 {
			key, plain, err := domain.NewAPIKey(company, kt, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got, err := domain.ParseKey(plain)
			if err != nil || got != kt {
				t.Fatalf("ParseKey(%q) = %v, %v; want %v", plain, got, err, kt)
			}
			if !strings.HasPrefix(plain, key.DisplayPrefix()) || len(plain) != len(kt.String())+1+40 {
				t.Fatalf("key %q, prefix %q", plain, key.DisplayPrefix())
			}
			if seen[plain] {
				t.Fatalf("duplicate key %q", plain)
			}
			seen[plain] = true
			p, err := key.Authenticate(domain.HashKey(plain))
			if err != nil || p.CompanyID != company || p.Environment != kt.Environment || p.KeyKind != kt.Kind || p.KeyID != key.ID() {
				t.Fatalf("Authenticate = %+v, %v", p, err)
			}
			if _, err := key.Authenticate(domain.HashKey(plain + "x")); !errors.Is(err, domain.ErrUnauthorized) {
				t.Fatalf("wrong hash authenticated: %v", err)
			}
		}
	}
}

func TestRevokedKeyDoesNotAuthenticate(t *testing.T) {
	t.Parallel()
	key, plain, _ := domain.NewAPIKey(uuid.New(), domain.KeyTypes[0], time.Now())
	now := time.Now()
	revoked := domain.UnmarshalAPIKeyFromDatabase(key.ID(), key.CompanyID(), key.Type(), key.DisplayPrefix(),
		key.Hash(), key.CreatedAt(), &now)
	if _, err := revoked.Authenticate(domain.HashKey(plain)); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("revoked key authenticated: %v", err)
	}
}

func TestParseKeyRefusesMalformedKeysAsUnauthorized(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 32)
	for _, raw := range []string{"", "sk_foo", "sk_test_", "sk_test_" + long[:31], "sk_test_" + long + "-",
		"SK_test_" + long, "sk_Test_" + long, "rk_test_" + long, "sk_test_" + strings.Repeat("a", 129), " sk_test_" + long} {
		if _, err := domain.ParseKey(raw); !errors.Is(err, domain.ErrUnauthorized) {
			t.Errorf("ParseKey(%q) accepted", raw)
		}
	}
}

func TestParseKeyTypeReadsEveryKeyTypeAndRefusesOthers(t *testing.T) {
	t.Parallel()
	for _, kt := range domain.KeyTypes {
		if got, err := domain.ParseKeyType(kt.String()); err != nil || got != kt {
			t.Errorf("ParseKeyType(%q) = %v, %v", kt, got, err)
		}
	}
	var v *validation.Error
	if _, err := domain.ParseKeyType("sk_prod"); !errors.As(err, &v) || v.Field != "kind_env" {
		t.Errorf("ParseKeyType(sk_prod) = %v", err)
	}
}
