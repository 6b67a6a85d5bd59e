package devstack

import (
	"fmt"
)

// CredentialsFile is the name, under DATA_DIR, of the file that tells a developer (and
// black-box tests) how to reach the running stack.
const CredentialsFile = "dev-credentials.json"

// Credentials is the content of the credentials file.
type Credentials struct {
	GatewayURL string `json:"gateway_url"`
	// GatewayURLs lists every gateway replica (one, or two in cluster mode).
	GatewayURLs []string `json:"gateway_urls"`
	DatabaseURL string   `json:"database_url"`
	NATSURL     string   `json:"nats_url"`
	// NATSKeys is the directory of the NATS users' seeds (natsauth): operator.nk for the nats
	// CLI and payplat-ctl (NATS_CREDS), one per service and publisher family.
	NATSKeys   string `json:"nats_keys,omitempty"`
	AdminToken string `json:"admin_token"`
	CronSecret string `json:"cron_secret"`
	// Company is the demo company; nil until it has been created.
	Company *Company `json:"company,omitempty"`
	// Keys are the demo company's API keys, shown by the gateway only when it is created.
	Keys *APIKeys `json:"keys,omitempty"`
	// Health maps each service to its readiness URL.
	Health map[string]string `json:"health"`
}

// Company names a company of the gateway.
type Company struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// APIKeys are a company's four API keys.
type APIKeys struct {
	SKTest string `json:"sk_test"`
	SKLive string `json:"sk_live"`
	PKTest string `json:"pk_test"`
	PKLive string `json:"pk_live"`
}

// ReadCredentials reads the credentials file at path; a missing file gives zero Credentials.
func ReadCredentials(path string) (Credentials, error) {
	return readJSONFile[Credentials](path, "credentials")
}

// WriteCredentials replaces the credentials file at path, readable by the owner only.
func WriteCredentials(path string, c Credentials) error {
	if err := writeJSONFile(path, c); err != nil {
		return fmt.Errorf("writing credentials: %w", err)
	}
	return nil
}
