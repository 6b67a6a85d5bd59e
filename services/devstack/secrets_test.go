package devstack

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestLoadSecretsGeneratesOnceAndKeeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := LoadSecrets(dir, Secrets{})
	if err != nil {
		t.Fatal(err)
	}
	if key, err := base64.StdEncoding.DecodeString(first.WebhookSecretKey); err != nil || len(key) != 32 {
		t.Errorf("WEBHOOK_SECRET_KEY %q is not the base64 of 32 bytes (%v)", first.WebhookSecretKey, err)
	}
	if seed, err := hex.DecodeString(first.WalletMasterSeed); err != nil || len(seed) != 64 {
		t.Errorf("WALLET_MASTER_SEED %q is not the hex of 64 bytes (%v)", first.WalletMasterSeed, err)
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

	second, err := LoadSecrets(dir, Secrets{})
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Fatalf("second load generated new secrets:\n%+v\n%+v", first, second)
	}
}

func TestLoadSecretsOverridesAreNotSaved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kept, err := LoadSecrets(dir, Secrets{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadSecrets(dir, Secrets{AdminToken: "from-env"})
	if err != nil {
		t.Fatal(err)
	}
	if got.AdminToken != "from-env" || got.CronSecret != kept.CronSecret {
		t.Fatalf("override: %+v", got)
	}
	again, err := LoadSecrets(dir, Secrets{})
	if err != nil {
		t.Fatal(err)
	}
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
	s, err := LoadSecrets(dir, Secrets{})
	if err != nil {
		t.Fatal(err)
	}
	if s.AdminToken != "kept" || s.CronSecret == "" || s.IdempotencySecret == "" || s.WalletMasterSeed == "" ||
		s.WebhookSecretKey == "" {
		t.Fatalf("secrets: %+v", s)
	}
	if again, _ := LoadSecrets(dir, Secrets{}); again != s {
		t.Fatalf("filled secrets not saved: %+v", again)
	}
}
