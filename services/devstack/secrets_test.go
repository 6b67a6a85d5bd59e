package devstack

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payplat/platform/services/merchant/domain/wallet"
	merchant "github.com/payplat/platform/services/merchant/service"
)

func TestLoadSecretsGeneratesOnceAndKeeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := mustLoadSecrets(t, dir, Secrets{})
	if key, err := base64.StdEncoding.DecodeString(first.WebhookSecretKey); err != nil || len(key) != 32 {
		t.Errorf("WEBHOOK_SECRET_KEY %q is not the base64 of 32 bytes (%v)", first.WebhookSecretKey, err)
	}
	if _, err := merchant.LoadConfigFrom(map[string]string{"WALLET_XPUB_LIVE": first.WalletXPubLive,
		"WALLET_XPUB_TEST": first.WalletXPubTest}); err != nil {
		t.Errorf("the merchant service refuses the generated wallet keys: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, SecretsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "seed") || first.LegacyWalletSeed != "" {
		t.Errorf("a wallet seed was kept: %s", data)
	}
	if len(first.AdminToken) != 64 || len(first.CronSecret) != 64 || len(first.IdempotencySecret) != 64 ||
		first.AdminToken == first.CronSecret || first.IdempotencySecret == first.AdminToken {
		t.Errorf("tokens: %q %q %q", first.AdminToken, first.CronSecret, first.IdempotencySecret)
	}
	fi, err := os.Stat(filepath.Join(dir, SecretsFile))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("secrets file mode %o, want 600", perm)
	}

	second := mustLoadSecrets(t, dir, Secrets{})
	if second != first {
		t.Fatalf("second load generated new secrets:\n%+v\n%+v", first, second)
	}
}

func TestLoadSecretsOverridesAreNotSaved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kept := mustLoadSecrets(t, dir, Secrets{})
	got := mustLoadSecrets(t, dir, Secrets{AdminToken: "from-env"})
	if got.AdminToken != "from-env" || got.CronSecret != kept.CronSecret {
		t.Fatalf("override: %+v", got)
	}
	again := mustLoadSecrets(t, dir, Secrets{})
	if again != kept {
		t.Fatalf("override was saved: %+v", again)
	}
}

func TestLoadSecretsFillsMissingFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SecretsFile), []byte(`{"admin_token":"kept"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustLoadSecrets(t, dir, Secrets{})
	if s.AdminToken != "kept" || s.CronSecret == "" || s.IdempotencySecret == "" || s.WalletXPubLive == "" ||
		s.WalletXPubTest == "" || s.WebhookSecretKey == "" {
		t.Fatalf("secrets: %+v", s)
	}
	if again, _ := LoadSecrets(dir, Secrets{}); again != s {
		t.Fatalf("filled secrets not saved: %+v", again)
	}
}

// A DATA_DIR of an older dev stack keeps the seed its merchant wallets came from: the account
// keys are derived from it (its wallets and the new ones share the seed), it stays in the file
// where it was, and no service is given it (TestChildEnvGivesEachSecretOnlyWhereNeeded).
func TestLoadSecretsDerivesTheWalletKeysFromALegacySeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const seedHex = "000102030405060708090a0b0c0d0e0f"
	if err := os.WriteFile(filepath.Join(dir, SecretsFile), []byte(`{"admin_token":"kept","wallet_master_seed":"`+seedHex+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustLoadSecrets(t, dir, Secrets{})
	seed, _ := wallet.ParseSeed(seedHex)
	live, _ := wallet.AccountXPub(seed, wallet.LiveAccount)
	test, _ := wallet.AccountXPub(seed, wallet.TestAccount)
	if s.WalletXPubLive != live.String() || s.WalletXPubTest != test.String() || s.LegacyWalletSeed != seedHex {
		t.Fatalf("secrets: %+v", s)
	}
	if again, _ := LoadSecrets(dir, Secrets{}); again != s {
		t.Fatalf("second load: %+v", again)
	}
}
