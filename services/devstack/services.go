package devstack

import (
	"slices"
	"strconv"
	"strings"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/pg"
)

// secretVars are kept from the children's environment: each service gets only its own, from
// Resolved. WALLET_MASTER_SEED is no service's any more (the merchant service refuses it).
var secretVars = []string{"NATS_CREDS", "ADMIN_TOKEN", "CRON_SECRET", "IDEMPOTENCY_SECRET", "WEBHOOK_SECRET_KEY", "WALLET_XPUB_LIVE",
	"WALLET_XPUB_TEST", "WALLET_MASTER_SEED"}

// Gateway is the service that serves the HTTP API; its /readyz is on GATEWAY_ADDR.
const Gateway = "gateway"

// Services are the binaries the dev stack runs, in start order. The health listener ports
// follow the same order from Config.HealthPortBase, the gateway's last (it came later).
var Services = []string{Gateway, "merchant", "pool", "payment-projection", "webhook-dispatcher"}

// nameWidth pads the output prefixes: the longest name of the topology's processes.
func nameWidth(t Topology) int {
	width := len("devstack")
	for _, in := range t.Instances() {
		width = max(width, len(in.Name))
	}
	return width
}

// Resolved is what the stack has decided before it starts the children.
type Resolved struct {
	DatabaseURL string
	NATSURL     string
	DataDir     string // absolute
	Secrets     Secrets
	// NATSKeys are the NATS users' seeds (natsauth); nil for a NATS without authorization.
	NATSKeys *natsauth.Keys
}

// HealthAddr returns the HEALTH_ADDR of (the first replica of) service name.
func (c Config) HealthAddr(name string) string { return c.HealthAddrOf(Instance{Service: name}) }

// ReadyURL returns the readiness URL of (the first replica of) service name.
func (c Config) ReadyURL(name string) string { return c.ReadyURLOf(Instance{Service: name}) }

// GatewayURL is the (first) gateway's base URL as a client on this machine reaches it.
func (c Config) GatewayURL() string { return c.GatewayURLOf(0) }

// ChildEnv returns the environment of (the first replica of) service name.
func (c Config) ChildEnv(base []string, name string, r Resolved) []string {
	return c.ChildEnvOf(base, Instance{Service: name, Name: name}, r)
}

// SchemaOf is the schema each service owns, whose role (pg.Roles) it logs in as.
var SchemaOf = map[string]string{Gateway: "gateway", "merchant": "merchant", "pool": "pool",
	"payment-projection": "payments", "webhook-dispatcher": "webhooks"}

// DatabaseURLOf returns the DATABASE_URL of service name: the stack's database as the role
// that owns the service's schema (pg.Roles), or the stack's own URL with DatabaseRoles off.
func (c Config) DatabaseURLOf(name string, r Resolved) string {
	if !c.DatabaseRoles {
		return r.DatabaseURL
	}
	u, err := pg.WithUser(r.DatabaseURL, pg.RoleOf(SchemaOf[name]))
	if err != nil {
		// Validate refused such a DATABASE_URL; the stack's own one is always valid. A service
		// given this fails at once with the reason.
		return "invalid://" + err.Error()
	}
	return u
}

// ChildEnvOf returns the environment of an instance: the dev stack's own environment without
// the secrets, then what every service reads, then what this one reads (later entries win in
// os/exec), then Config.ExtraEnv. Each secret goes only to the service that needs it.
func (c Config) ChildEnvOf(base []string, in Instance, r Resolved) []string {
	name := in.Service
	env := make([]string, 0, len(base)+16)
	for _, kv := range base {
		key, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretVars, key) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"DATABASE_URL="+c.DatabaseURLOf(name, r),
		"NATS_URL="+r.NATSURL,
		"DATA_DIR="+r.DataDir,
		"LOG_FORMAT="+c.LogFormat,
		"LOG_LEVEL="+c.LogLevel,
		"HEALTH_ADDR="+c.HealthAddrOf(in),
		// One replica per NATS node: 1 on the single server, 3 on the cluster.
		"STREAM_REPLICAS="+strconv.Itoa(c.Topology().StreamReplicas()),
	)
	if r.NATSKeys != nil {
		// Each service logs in as its own natsauth user (the user of its name).
		env = append(env, "NATS_CREDS="+r.NATSKeys.SeedFile(name))
	}
	switch name {
	case Gateway:
		env = append(env,
			"GATEWAY_ADDR="+c.GatewayAddrOf(in.Replica),
			"ADMIN_TOKEN="+r.Secrets.AdminToken,
			"CRON_SECRET="+r.Secrets.CronSecret,
			"IDEMPOTENCY_SECRET="+r.Secrets.IdempotencySecret,
		)
	case "merchant":
		env = append(env, "WALLET_XPUB_LIVE="+r.Secrets.WalletXPubLive, "WALLET_XPUB_TEST="+r.Secrets.WalletXPubTest)
	case "webhook-dispatcher":
		env = append(env,
			"WEBHOOK_SECRET_KEY="+r.Secrets.WebhookSecretKey,
			// Local receivers (a netcat, a webhook.site tunnel) are HTTP on private addresses
			// and any port.
			"WEBHOOK_ALLOW_PRIVATE_NETWORKS=true",
			"WEBHOOK_ALLOW_HTTP=true",
			"WEBHOOK_ALLOW_ANY_PORT=true",
		)
	}
	return append(env, c.ExtraEnv...)
}
