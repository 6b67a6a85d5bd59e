package devstack

import (
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/natsauth"
)

func TestEmptyEnvironmentGivesTheDefaultDirsPortsAndURLs(t *testing.T) {
	t.Parallel()
	cfg := mustLoadConfig(t, nil)
	if cfg.BinDir != ".data/bin" || cfg.DataDir != ".data" || cfg.GatewayAddr != "127.0.0.1:8080" ||
		cfg.PostgresPort != 5433 || cfg.NATSPort != 4250 || cfg.CronInterval != time.Minute || cfg.LogFormat != "text" {
		t.Fatalf("defaults: %+v", cfg)
	}
	want := map[string]string{
		"gateway":            "http://127.0.0.1:8080/readyz",
		"merchant":           "http://127.0.0.1:8081/readyz",
		"pool":               "http://127.0.0.1:8082/readyz",
		"payment-projection": "http://127.0.0.1:8083/readyz",
		"webhook-dispatcher": "http://127.0.0.1:8084/readyz",
	}
	for name, url := range want {
		if got := cfg.ReadyURL(name); got != url {
			t.Errorf("ReadyURL(%s) = %s, want %s", name, got, url)
		}
	}
	// Metrics are on the health listeners, the gateway's included (not on its API: issue 16).
	if got := cfg.MetricsURLOf(Instance{Service: Gateway}); got != "http://127.0.0.1:8085/metrics" {
		t.Errorf("gateway metrics at %s", got)
	}
	if got := cfg.MetricsURLOf(Instance{Service: "pool", Replica: 1}); got != "http://127.0.0.1:8092/metrics" {
		t.Errorf("second pool replica's metrics at %s", got)
	}
}

// longAdminToken is an ADMIN_TOKEN the gateway accepts (MinSecretBytes or more).
const longAdminToken = "adm-0123456789abcdef0123456789abcdef"

func TestLoadConfigTakesDirsURLsAndSecretsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(map[string]string{
		"BIN_DIR": "/opt/bin", "DATA_DIR": "/var/dev", "DEV_CRON_INTERVAL": "0", "GATEWAY_ADDR": ":9000",
		"ADMIN_TOKEN": longAdminToken, "WALLET_XPUB_LIVE": "xpub-live", "DATABASE_URL": "postgres://x", "NATS_URL": "nats://y",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BinDir != "/opt/bin" || cfg.DataDir != "/var/dev" || cfg.CronInterval != 0 ||
		cfg.DatabaseURL != "postgres://x" || cfg.NATSURL != "nats://y" {
		t.Fatalf("config: %+v", cfg)
	}
	if cfg.Secrets.AdminToken != longAdminToken || cfg.Secrets.WalletXPubLive != "xpub-live" || cfg.Secrets.CronSecret != "" {
		t.Fatalf("secrets: %+v", cfg.Secrets)
	}
	// Without BIN_DIR the binaries are where `make build` puts them: under DATA_DIR.
	if cfg, err := LoadConfig(map[string]string{"DATA_DIR": "/var/dev"}); err != nil || cfg.BinDir != "/var/dev/bin" {
		t.Fatalf("BinDir with DATA_DIR only: %q, %v", cfg.BinDir, err)
	}
	if got := cfg.GatewayURL(); got != "http://127.0.0.1:9000" {
		t.Fatalf("GatewayURL = %s", got)
	}
}

func TestLoadConfigRefusesBadValuesAndSecretsTheServicesWouldRefuse(t *testing.T) {
	t.Parallel()
	tests := map[string]map[string]string{
		"bad duration":    {"DEV_CRON_INTERVAL": "often"},
		"negative cron":   {"DEV_CRON_INTERVAL": "-1m"},
		"bad port":        {"DEV_PG_PORT": "70000"},
		"bad log format":  {"LOG_FORMAT": "xml"},
		"zero stop delay": {"DEV_STOP_TIMEOUT": "0s"},
		// The merchant service refuses the seed; the dev stack says so before it starts anything.
		"retired wallet seed": {"WALLET_MASTER_SEED": "000102030405060708090a0b0c0d0e0f"},
		// The gateway would refuse them, once PostgreSQL and NATS are up (issue 16).
		"short admin token":        {"ADMIN_TOKEN": "adm"},
		"short cron secret":        {"CRON_SECRET": strings.Repeat("c", MinSecretBytes-1)},
		"short idempotency secret": {"IDEMPOTENCY_SECRET": "idem"},
	}
	for name, environ := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := LoadConfig(environ); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestChildEnvGivesEachSecretOnlyWhereNeeded(t *testing.T) {
	t.Parallel()
	cfg := mustLoadConfig(t, nil)
	r := Resolved{DatabaseURL: "postgres://db", NATSURL: "nats://n", DataDir: "/d",
		Secrets: Secrets{AdminToken: "adm", CronSecret: "cron", IdempotencySecret: "idem", WebhookSecretKey: "whk",
			WalletXPubLive: "xl", WalletXPubTest: "xt", LegacyWalletSeed: "seed"}}
	base := []string{"PATH=/bin", "ADMIN_TOKEN=from-shell", "HEALTH_ADDR=:1", "WALLET_MASTER_SEED=from-shell"}
	envOf := func(name string) map[string]string {
		m := map[string]string{}
		for _, kv := range cfg.ChildEnv(base, name, r) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v // later entries win, as in os/exec
		}
		return m
	}
	gw := envOf("gateway")
	if gw["ADMIN_TOKEN"] != "adm" || gw["CRON_SECRET"] != "cron" || gw["IDEMPOTENCY_SECRET"] != "idem" ||
		gw["GATEWAY_ADDR"] != "127.0.0.1:8080" ||
		gw["HEALTH_ADDR"] != "127.0.0.1:8085" || gw["WALLET_XPUB_LIVE"] != "" || gw["PATH"] != "/bin" {
		t.Errorf("gateway env: %v", gw)
	}
	m := envOf("merchant")
	if m["WALLET_XPUB_LIVE"] != "xl" || m["WALLET_XPUB_TEST"] != "xt" || m["ADMIN_TOKEN"] != "" || m["IDEMPOTENCY_SECRET"] != "" ||
		m["HEALTH_ADDR"] != "127.0.0.1:8081" ||
		m["DATABASE_URL"] != "postgres://payplat_merchant@db" || m["NATS_URL"] != "nats://n" || m["LOG_FORMAT"] != "text" {
		t.Errorf("merchant env: %v", m)
	}
	// No service gets a wallet seed, neither the legacy one the stack keeps nor one from the shell.
	for _, name := range Services {
		for k, v := range envOf(name) {
			if k == "WALLET_MASTER_SEED" || strings.Contains(v, "seed") {
				t.Errorf("%s gets %s=%s", name, k, v)
			}
		}
	}
	w := envOf("webhook-dispatcher")
	if w["WEBHOOK_SECRET_KEY"] != "whk" || w["WEBHOOK_ALLOW_PRIVATE_NETWORKS"] != "true" ||
		w["WEBHOOK_ALLOW_HTTP"] != "true" || w["WEBHOOK_ALLOW_ANY_PORT"] != "true" || w["HEALTH_ADDR"] != "127.0.0.1:8084" {
		t.Errorf("webhook-dispatcher env: %v", w)
	}
}

// Each service logs in as the role that owns its schema (issue 16 item 3); DEV_DB_ROLES=false
// hands every one the stack's URL as it is.
func TestChildEnvGivesEachServiceItsDatabaseRole(t *testing.T) {
	t.Parallel()
	cfg := mustLoadConfig(t, nil)
	r := Resolved{DatabaseURL: "postgres://postgres@127.0.0.1:5433/payplat?sslmode=disable"}
	want := map[string]string{Gateway: "payplat_gateway", "merchant": "payplat_merchant", "pool": "payplat_pool",
		"payment-projection": "payplat_payments", "webhook-dispatcher": "payplat_webhooks"}
	for _, name := range Services {
		got := cfg.DatabaseURLOf(name, r)
		if got != "postgres://"+want[name]+"@127.0.0.1:5433/payplat?sslmode=disable" {
			t.Errorf("%s: DATABASE_URL %s, want role %s", name, got, want[name])
		}
	}
	off := mustLoadConfig(t, map[string]string{"DEV_DB_ROLES": "false"})
	if got := off.DatabaseURLOf("pool", r); got != r.DatabaseURL {
		t.Errorf("DEV_DB_ROLES=false: pool gets %s", got)
	}
}

// Each service logs in to NATS as its own natsauth user (issue 16 item 1), never with the
// shell's NATS_CREDS; a NATS without authorization gives none.
func TestChildEnvGivesEachServiceItsNATSUser(t *testing.T) {
	t.Parallel()
	cfg := mustLoadConfig(t, nil)
	keys := &natsauth.Keys{Dir: "/d/nats-keys"}
	base := []string{"NATS_CREDS=/home/me/operator.nk"}
	for _, name := range Services {
		env := map[string]string{}
		for _, kv := range cfg.ChildEnv(base, name, Resolved{NATSKeys: keys}) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		if env["NATS_CREDS"] != "/d/nats-keys/"+name+".nk" {
			t.Errorf("%s: NATS_CREDS=%s", name, env["NATS_CREDS"])
		}
		if _, ok := natsauth.Lookup(name); !ok {
			t.Errorf("%s has no natsauth user", name)
		}
		for _, kv := range cfg.ChildEnv(base, name, Resolved{}) {
			if strings.HasPrefix(kv, "NATS_CREDS=") {
				t.Errorf("%s without authorization gets %s", name, kv)
			}
		}
	}
}

// mustLoadConfig is LoadConfig of environ, failing the test on an error.
func mustLoadConfig(t *testing.T, environ map[string]string) Config {
	t.Helper()
	cfg, err := LoadConfig(environ)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// mustLoadSecrets is LoadSecrets of dir with overrides, failing the test on an error.
func mustLoadSecrets(t *testing.T, dir string, overrides Secrets) Secrets {
	t.Helper()
	s, err := LoadSecrets(dir, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
