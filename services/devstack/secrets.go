package devstack

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/payplat/platform/services/merchant/domain/wallet"
)

// SecretsFile is the name, under DATA_DIR, of the file that keeps the generated secrets.
const SecretsFile = "dev-secrets.json"

// Secrets are the stack's shared secrets and keys. They are generated once and kept in
// $DATA_DIR/dev-secrets.json, because the services store data that depends on them (the
// webhook signing secrets are encrypted with WebhookSecretKey, merchant wallets derive from the
// wallet account keys): a second run must see the same values.
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
	// WalletXPubLive and WalletXPubTest are the account xpubs merchant wallets derive from
	// (m/44'/60'/0' and m/44'/60'/1'). The dev stack derives them from a fresh seed and forgets
	// the seed, as an operator keeps it off the platform: nothing in DATA_DIR can spend from a
	// dev wallet (there is no chain in the dev stack either).
	WalletXPubLive string `json:"wallet_xpub_live" env:"WALLET_XPUB_LIVE"`
	WalletXPubTest string `json:"wallet_xpub_test" env:"WALLET_XPUB_TEST"`
	// LegacyWalletSeed is the seed an older dev stack kept and gave the merchant service. The
	// account keys of a DATA_DIR that has one are derived from it, so that its wallets and the
	// new ones come from the same seed; it is never given to a service.
	LegacyWalletSeed string `json:"wallet_master_seed,omitempty" env:"-"`
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
		if err := writeJSONFile(path, filled); err != nil {
			return Secrets{}, fmt.Errorf("saving secrets: %w", err)
		}
	}
	return filled.overriddenBy(overrides), nil
}

func readSecrets(path string) (Secrets, error) { return readJSONFile[Secrets](path, "secrets") }

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
	if s.WalletXPubLive == "" || s.WalletXPubTest == "" {
		return s.withWalletKeys()
	}
	return s, nil
}

// withWalletKeys derives the wallet account keys from the legacy seed if there is one, else
// from a fresh seed that is then forgotten.
func (s Secrets) withWalletKeys() (Secrets, error) {
	seed := make([]byte, 64)
	if _, err := rand.Read(seed); err != nil {
		return Secrets{}, fmt.Errorf("generating the wallet seed: %w", err)
	}
	if s.LegacyWalletSeed != "" {
		var err error
		if seed, err = wallet.ParseSeed(s.LegacyWalletSeed); err != nil {
			return Secrets{}, fmt.Errorf("%s: wallet_master_seed: %w", SecretsFile, err)
		}
	}
	for _, k := range []struct {
		dst     *string
		account uint32
	}{{&s.WalletXPubLive, wallet.LiveAccount}, {&s.WalletXPubTest, wallet.TestAccount}} {
		key, err := wallet.AccountXPub(seed, k.account)
		if err != nil {
			return Secrets{}, fmt.Errorf("deriving the wallet account keys: %w", err)
		}
		*k.dst = key.String()
	}
	return s, nil
}

func (s Secrets) overriddenBy(o Secrets) Secrets {
	for _, f := range []struct{ dst, src *string }{
		{&s.AdminToken, &o.AdminToken},
		{&s.CronSecret, &o.CronSecret},
		{&s.IdempotencySecret, &o.IdempotencySecret},
		{&s.WebhookSecretKey, &o.WebhookSecretKey},
		{&s.WalletXPubLive, &o.WalletXPubLive},
		{&s.WalletXPubTest, &o.WalletXPubTest},
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
