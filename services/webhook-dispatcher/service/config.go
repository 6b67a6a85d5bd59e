package service

import (
	"crypto/x509"
	"fmt"
	"math"
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
	// AllowAnyPort lets endpoints use ports other than 443 and 8443 (WEBHOOK_ALLOW_ANY_PORT; the
	// dev stack sets it: local receivers listen on any port).
	AllowAnyPort bool `env:"WEBHOOK_ALLOW_ANY_PORT" envDefault:"false"`
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
	// ManualRetryRate is how many manual retries a second each company may ask for in each
	// environment, on average (WEBHOOK_MANUAL_RETRY_RATE; 0 turns the limit off), up to
	// ManualRetryBurst at once (WEBHOOK_MANUAL_RETRY_BURST). Per dispatcher replica.
	ManualRetryRate  float64 `env:"WEBHOOK_MANUAL_RETRY_RATE" envDefault:"1"`
	ManualRetryBurst int     `env:"WEBHOOK_MANUAL_RETRY_BURST" envDefault:"10"`
	// DeliveryRetention is how long delivered deliveries stay in the log
	// (WEBHOOK_DELIVERY_RETENTION; 0 keeps them forever); PruneInterval is how often the older
	// ones are deleted (WEBHOOK_PRUNE_INTERVAL).
	DeliveryRetention time.Duration `env:"WEBHOOK_DELIVERY_RETENTION" envDefault:"720h"`
	PruneInterval     time.Duration `env:"WEBHOOK_PRUNE_INTERVAL" envDefault:"1h"`
	// Partitions is the number of partitions of the companies (WEBHOOK_PARTITIONS): each is read
	// for by one dispatcher at a time, in order, and the dispatchers share them. The same value
	// on every replica; it changes only while every dispatcher is stopped
	// (adapters.ErrPartitionsChanged).
	Partitions int `env:"WEBHOOK_PARTITIONS" envDefault:"8"`

	// rootCAs replaces the system roots of the HTTP client (tests; see WithRootCAs).
	rootCAs *x509.CertPool
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() (Config, error) {
	c, err := config.Load[Config]()
	if err != nil {
		return c, err
	}
	return c, c.validate()
}

// LoadConfigFrom reads the configuration from environ (tests).
func LoadConfigFrom(environ map[string]string) (Config, error) {
	c, err := config.LoadFrom[Config](environ)
	if err != nil {
		return c, err
	}
	return c, c.validate()
}

// validate refuses values that would silently turn a limit into something else.
func (c Config) validate() error {
	if c.ManualRetryRate < 0 || math.IsNaN(c.ManualRetryRate) || math.IsInf(c.ManualRetryRate, 0) {
		return fmt.Errorf("WEBHOOK_MANUAL_RETRY_RATE must be 0 (off) or a positive number, not %v", c.ManualRetryRate)
	}
	if c.ManualRetryRate > 0 && c.ManualRetryBurst < 1 {
		return fmt.Errorf("WEBHOOK_MANUAL_RETRY_BURST must be at least 1, not %d", c.ManualRetryBurst)
	}
	if c.DeliveryRetention < 0 {
		return fmt.Errorf("WEBHOOK_DELIVERY_RETENTION must be 0 (keep forever) or positive, not %s", c.DeliveryRetention)
	}
	if c.DeliveryRetention > 0 && c.PruneInterval <= 0 {
		return fmt.Errorf("WEBHOOK_PRUNE_INTERVAL must be positive, not %s", c.PruneInterval)
	}
	return nil
}

// WithRootCAs makes the dispatcher trust only pool's certificates (a test's TLS receivers).
func (c Config) WithRootCAs(pool *x509.CertPool) Config {
	c.rootCAs = pool
	return c
}
