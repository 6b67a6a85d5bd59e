package service

import (
	"crypto/x509"
	"time"

	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Config is the dispatcher's own configuration (DESIGN §6), read once in main; the shared
// runtime reads the common variables (DATABASE_URL, NATS_URL, ...).
type Config struct {
	// SecretKey encrypts the stored signing secrets (WEBHOOK_SECRET_KEY): 32 bytes as 64 hex
	// characters or base64. Required.
	SecretKey string `env:"WEBHOOK_SECRET_KEY"`
	// AllowPrivateNetworks lets endpoints resolve to private, loopback, link-local and other
	// non-public addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS; the dev stack sets it).
	AllowPrivateNetworks bool `env:"WEBHOOK_ALLOW_PRIVATE_NETWORKS" envDefault:"false"`
	// AllowHTTP lets endpoints use http:// (WEBHOOK_ALLOW_HTTP; the dev stack sets it).
	AllowHTTP bool `env:"WEBHOOK_ALLOW_HTTP" envDefault:"false"`
	// RetrySchedule is the delay after each failed attempt (WEBHOOK_RETRY_SCHEDULE).
	RetrySchedule domain.Schedule `env:"WEBHOOK_RETRY_SCHEDULE" envDefault:"5m,15m,45m,2h,6h"`
	// Timeout is how long a receiver has to answer 2xx (WEBHOOK_TIMEOUT).
	Timeout time.Duration `env:"WEBHOOK_TIMEOUT" envDefault:"10s"`
	// EndpointConcurrency bounds first attempts in flight per endpoint and process
	// (WEBHOOK_ENDPOINT_CONCURRENCY); 1 keeps each company's events in order.
	EndpointConcurrency int `env:"WEBHOOK_ENDPOINT_CONCURRENCY" envDefault:"1"`
	// RecoveryInterval is how often first attempts stranded by a crashed dispatcher (or by a
	// full endpoint queue) are picked up again (WEBHOOK_RECOVERY_INTERVAL).
	RecoveryInterval time.Duration `env:"WEBHOOK_RECOVERY_INTERVAL" envDefault:"10s"`
	// Partitions is the number of partitions of the events stream (WEBHOOK_PARTITIONS): each is
	// consumed by one dispatcher at a time, in order, and the dispatchers share them. The same
	// value on every replica; changing it means re-creating the stream (ports.ErrPartitionsChanged).
	Partitions int `env:"WEBHOOK_PARTITIONS" envDefault:"8"`

	// rootCAs replaces the system roots of the HTTP client (tests; see WithRootCAs).
	rootCAs *x509.CertPool
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() (Config, error) { return config.Load[Config]() }

// LoadConfigFrom reads the configuration from environ (tests).
func LoadConfigFrom(environ map[string]string) (Config, error) {
	return config.LoadFrom[Config](environ)
}

// WithRootCAs makes the dispatcher trust only pool's certificates (a test's TLS receivers).
func (c Config) WithRootCAs(pool *x509.CertPool) Config {
	c.rootCAs = pool
	return c
}
