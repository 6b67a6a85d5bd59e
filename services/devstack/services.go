package devstack

import (
	"net"
	"slices"
	"strconv"
	"strings"
)

var secretVars = []string{"ADMIN_TOKEN", "CRON_SECRET", "WEBHOOK_SECRET_KEY", "WALLET_MASTER_SEED"}

// Gateway is the service that serves the HTTP API; its /readyz is on GATEWAY_ADDR.
const Gateway = "gateway"

// Services are the binaries the dev stack runs, in start order. The health listener ports
// follow the same order from Config.HealthPortBase (the gateway needs none of its own).
var Services = []string{Gateway, "merchant", "pool", "payment-projection", "webhook-dispatcher"}

// nameWidth pads the output prefixes: the longest name, "webhook-dispatcher".
const nameWidth = len("webhook-dispatcher")

// Resolved is what the stack has decided before it starts the children.
type Resolved struct {
	DatabaseURL string
	NATSURL     string
	DataDir     string // absolute
	Secrets     Secrets
}

// HealthAddr returns the HEALTH_ADDR of service name, "" for the gateway.
func (c Config) HealthAddr(name string) string {
	for i, s := range Services[1:] {
		if s == name {
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.HealthPortBase+i))
		}
	}
	return ""
}

// ReadyURL returns the readiness URL of service name.
func (c Config) ReadyURL(name string) string {
	if name == Gateway {
		return c.GatewayURL() + "/readyz"
	}
	return "http://" + c.HealthAddr(name) + "/readyz"
}

// GatewayURL is the gateway's base URL as a client on this machine reaches it.
func (c Config) GatewayURL() string {
	host, port, err := net.SplitHostPort(c.GatewayAddr)
	if err != nil {
		return "http://" + c.GatewayAddr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// ChildEnv returns the environment of service name: the dev stack's own environment without
// the secrets, then what every service reads, then what this one reads (later entries win in
// os/exec), then Config.ExtraEnv. Each secret goes only to the service that needs it.
func (c Config) ChildEnv(base []string, name string, r Resolved) []string {
	env := make([]string, 0, len(base)+16)
	for _, kv := range base {
		key, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretVars, key) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"DATABASE_URL="+r.DatabaseURL,
		"NATS_URL="+r.NATSURL,
		"DATA_DIR="+r.DataDir,
		"LOG_FORMAT="+c.LogFormat,
		"LOG_LEVEL="+c.LogLevel,
		"HEALTH_ADDR="+c.HealthAddr(name),
		// A single embedded server: streams cannot have more than one replica.
		"STREAM_REPLICAS=1",
	)
	switch name {
	case Gateway:
		env = append(env,
			"GATEWAY_ADDR="+c.GatewayAddr,
			"ADMIN_TOKEN="+r.Secrets.AdminToken,
			"CRON_SECRET="+r.Secrets.CronSecret,
		)
	case "merchant":
		env = append(env, "WALLET_MASTER_SEED="+r.Secrets.WalletMasterSeed)
	case "webhook-dispatcher":
		env = append(env,
			"WEBHOOK_SECRET_KEY="+r.Secrets.WebhookSecretKey,
			// Local receivers (a netcat, a webhook.site tunnel) are HTTP on private addresses.
			"WEBHOOK_ALLOW_PRIVATE_NETWORKS=true",
			"WEBHOOK_ALLOW_HTTP=true",
		)
	}
	return append(env, c.ExtraEnv...)
}
