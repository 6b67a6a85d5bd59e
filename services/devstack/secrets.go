package devstack

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SecretsFile is the name, under DATA_DIR, of the file that keeps the generated secrets.
const SecretsFile = "dev-secrets.json"

// Secrets are the stack's shared secrets. They are generated once and kept in
// $DATA_DIR/dev-secrets.json, because the services store data that depends on them (the
// webhook signing secrets are encrypted with WebhookSecretKey, merchant wallets derive from
// WalletMasterSeed): a second run must see the same values.
type Secrets struct {
	// AdminToken guards the gateway's admin API.
	AdminToken string `json:"admin_token" env:"ADMIN_TOKEN"`
	// CronSecret guards the gateway's cron endpoint.
	CronSecret string `json:"cron_secret" env:"CRON_SECRET"`
	// IdempotencySecret is mixed into the keys that seal the gateway's stored idempotent
	// responses; changing it forgets them.
	IdempotencySecret string `json:"idempotency_secret" env:"IDEMPOTENCY_SECRET"`
	// WebhookSecretKey is the base64 of 32 random bytes that encrypts webhook signing secrets.
	WebhookSecretKey string `json:"webhook_secret_key" env:"WEBHOOK_SECRET_KEY"`
	// WalletMasterSeed is the hex of the 64-byte seed merchant wallets are derived from.
	WalletMasterSeed string `json:"wallet_master_seed" env:"WALLET_MASTER_SEED"`
}

// LoadSecrets returns the secrets kept in dataDir, generating and saving (0600) those that
// are missing, with the non-empty fields of overrides taking precedence. Overrides are not
// saved: without them the next run is back to the kept values.
func LoadSecrets(dataDir string, overrides Secrets) (Secrets, error) {
	path := filepath.Join(dataDir, SecretsFile)
	kept, err := readSecrets(path)
	if err != nil {
		return Secrets{}, err
	}
	filled, err := kept.withGenerated()
	if err != nil {
		return Secrets{}, err
	}
	if filled != kept {
		data, err := json.MarshalIndent(filled, "", "  ")
		if err != nil {
			return Secrets{}, err
		}
		if err := writePrivateFile(path, append(data, '\n')); err != nil {
			return Secrets{}, fmt.Errorf("saving secrets: %w", err)
		}
	}
	return filled.overriddenBy(overrides), nil
}

func readSecrets(path string) (Secrets, error) {
	var s Secrets
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading secrets: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("reading secrets: %s: %w", path, err)
	}
	return s, nil
}

// withGenerated fills the empty fields with fresh random values.
func (s Secrets) withGenerated() (Secrets, error) {
	gen := []struct {
		field *string
		size  int
		enc   func([]byte) string
	}{
		{&s.AdminToken, 32, hex.EncodeToString},
		{&s.CronSecret, 32, hex.EncodeToString},
		{&s.IdempotencySecret, 32, hex.EncodeToString},
		{&s.WebhookSecretKey, 32, base64.StdEncoding.EncodeToString},
		{&s.WalletMasterSeed, 64, hex.EncodeToString},
	}
	for _, g := range gen {
		if *g.field != "" {
			continue
		}
		b := make([]byte, g.size)
		if _, err := rand.Read(b); err != nil {
			return Secrets{}, fmt.Errorf("generating secrets: %w", err)
		}
		*g.field = g.enc(b)
	}
	return s, nil
}

func (s Secrets) overriddenBy(o Secrets) Secrets {
	for _, f := range []struct{ dst, src *string }{
		{&s.AdminToken, &o.AdminToken},
		{&s.CronSecret, &o.CronSecret},
		{&s.IdempotencySecret, &o.IdempotencySecret},
		{&s.WebhookSecretKey, &o.WebhookSecretKey},
		{&s.WalletMasterSeed, &o.WalletMasterSeed},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	return s
}

// writePrivateFile replaces path with data, readable by the owner only. It writes a
// temporary file and renames it, so a crash never leaves half a file behind.
func writePrivateFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
