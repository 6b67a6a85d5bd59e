package service

import (
	"errors"
	"fmt"
	"time"

	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/services/gateway/ports"
)

// Config is the gateway's configuration, read from the environment once in main (see Load).
type Config struct {
	config.Common `envPrefix:""`

	// Addr is where the API listens; port 0 picks a free port (see Service.Addr).
	Addr string `env:"GATEWAY_ADDR" envDefault:"127.0.0.1:8080"`
	// AdminToken guards /api/v1/admin/...; empty locks those routes. At least MinSecretBytes.
	AdminToken string `env:"ADMIN_TOKEN"`
	// CronSecret guards /api/v1/cron/...; empty locks those routes. At least MinSecretBytes.
	CronSecret string `env:"CRON_SECRET"`
	// IdempotencySecret is mixed into the keys that identify Idempotency-Keys and seal the
	// responses stored for them (IDEMPOTENCY_SECRET, required, at least MinSecretBytes): without
	// it, whoever reads the table and guesses a caller's Idempotency-Key reads the response,
	// which may hold API keys or webhook signing secrets.
	IdempotencySecret string `env:"IDEMPOTENCY_SECRET"`

	// StreamReplicas, DuplicateWindow and DeadLetterMaxAge configure the JetStream streams the
	// gateway provisions at start, like every service (STREAM_REPLICAS, STREAM_DUPLICATE_WINDOW).
	StreamReplicas  int           `env:"STREAM_REPLICAS" envDefault:"1"`
	DuplicateWindow time.Duration `env:"STREAM_DUPLICATE_WINDOW" envDefault:"2m"`
	// DeadLetterMaxAge is how long the dead-letter stream keeps a message (DEADLETTER_MAX_AGE),
	// the same on every service.
	DeadLetterMaxAge time.Duration `env:"DEADLETTER_MAX_AGE" envDefault:"720h"`

	// IdempotencyLease is how long a request in flight holds its Idempotency-Key before it is
	// presumed dead (its gateway was killed) and a retry may take the key over. It must
	// outlive the request: at least twice RequestTimeout (LoadFrom checks it).
	IdempotencyLease time.Duration `env:"GATEWAY_IDEMPOTENCY_LEASE" envDefault:"1m"`
	// RequestTimeout bounds a request that holds an Idempotency-Key (GATEWAY_REQUEST_TIMEOUT).
	RequestTimeout time.Duration `env:"GATEWAY_REQUEST_TIMEOUT" envDefault:"30s"`
	// IdempotencyRetention is how long a stored response is replayed for its key.
	IdempotencyRetention time.Duration `env:"GATEWAY_IDEMPOTENCY_RETENTION" envDefault:"24h"`

	// PublishTimeout bounds each JetStream publish of a payment request
	// (GATEWAY_PUBLISH_TIMEOUT): the first is made while the merchant's row is locked, so it is
	// short, and a payment whose publish takes longer is answered 503 (retry it with its
	// Idempotency-Key).
	PublishTimeout time.Duration `env:"GATEWAY_PUBLISH_TIMEOUT" envDefault:"2s"`
	// StatementTimeout is the statement_timeout and idle_in_transaction_session_timeout of the
	// gateway's database connections (GATEWAY_STATEMENT_TIMEOUT; 0: the server's): no statement,
	// lock wait or transaction left open by a stuck request holds a connection longer.
	StatementTimeout time.Duration `env:"GATEWAY_STATEMENT_TIMEOUT" envDefault:"10s"`

	// KeyCacheTTL is how long a gateway remembers an active API key it looked up (0: not at
	// all). Rolls are honoured at once on every gateway (adapters.CachedKeys); the TTL bounds
	// how long a gateway that missed the announcement of one still accepts the old key.
	KeyCacheTTL time.Duration `env:"GATEWAY_KEY_CACHE_TTL" envDefault:"5s"`

	// Dashboard configures the partners' web UI under /dashboard/ (issue 18).
	Dashboard DashboardConfig `envPrefix:""`

	// RateLimits are the API's token buckets (issue 17).
	RateLimits RateLimitConfig `envPrefix:""`
}

// RateLimitConfig is the rate limits' part of the configuration: requests a second and burst
// per API key for each route class, and per client address for calls without a valid
// credential. A rate of 0 turns that class's limit off. The budgets are per gateway replica
// (services/gateway/README.md, "Rate limits").
type RateLimitConfig struct {
	Reads          float64 `env:"GATEWAY_RATE_LIMIT_READS" envDefault:"100"`
	ReadsBurst     int     `env:"GATEWAY_RATE_LIMIT_READS_BURST" envDefault:"200"`
	Writes         float64 `env:"GATEWAY_RATE_LIMIT_WRITES" envDefault:"50"`
	WritesBurst    int     `env:"GATEWAY_RATE_LIMIT_WRITES_BURST" envDefault:"100"`
	SDK            float64 `env:"GATEWAY_RATE_LIMIT_SDK" envDefault:"100"`
	SDKBurst       int     `env:"GATEWAY_RATE_LIMIT_SDK_BURST" envDefault:"200"`
	Anonymous      float64 `env:"GATEWAY_RATE_LIMIT_ANONYMOUS" envDefault:"20"`
	AnonymousBurst int     `env:"GATEWAY_RATE_LIMIT_ANONYMOUS_BURST" envDefault:"40"`
	// ClientIPHeader names the header a trusted proxy puts the client's address in; empty uses
	// the connection's peer address.
	ClientIPHeader string `env:"GATEWAY_CLIENT_IP_HEADER"`
}

// ports returns the limits as the HTTP layer takes them.
func (c RateLimitConfig) ports() ports.RateLimits {
	return ports.RateLimits{
		Reads:          ports.RateLimit{Rate: c.Reads, Burst: c.ReadsBurst},
		Writes:         ports.RateLimit{Rate: c.Writes, Burst: c.WritesBurst},
		SDK:            ports.RateLimit{Rate: c.SDK, Burst: c.SDKBurst},
		Anonymous:      ports.RateLimit{Rate: c.Anonymous, Burst: c.AnonymousBurst},
		ClientIPHeader: c.ClientIPHeader,
	}
}

// DashboardConfig is the dashboard's part of the configuration.
type DashboardConfig struct {
	// SessionIdle ends a dashboard session unused for this long.
	SessionIdle time.Duration `env:"DASHBOARD_SESSION_IDLE" envDefault:"12h"`
	// MaxStreams bounds the live-update (SSE) connections of one gateway.
	MaxStreams int `env:"DASHBOARD_MAX_STREAMS" envDefault:"500"`
	// Heartbeat is the interval of the comment line on an idle live-update connection.
	Heartbeat time.Duration `env:"DASHBOARD_SSE_HEARTBEAT" envDefault:"15s"`
	// APIReferenceURL is where the developers page links for the API reference (empty: the
	// dashboard's own page).
	APIReferenceURL string `env:"DASHBOARD_API_REFERENCE_URL"`
}

// DefaultHealthAddr is the gateway's HEALTH_ADDR unless set: its own /healthz, /readyz and
// /metrics listener, after the other services' 8081 to 8084. /metrics is served there only, not
// on the API listener (GATEWAY_ADDR), which is public.
const DefaultHealthAddr = "127.0.0.1:8085"

func defaults(c *Config) { c.HealthAddr = DefaultHealthAddr }

// Load reads the configuration from the environment.
func Load() (Config, error) {
	c, err := config.Load[Config](defaults)
	if err != nil {
		return c, err
	}
	return c, c.validate()
}

// LoadFrom reads the configuration from environ (tests, tools).
func LoadFrom(environ map[string]string) (Config, error) {
	c, err := config.LoadFrom[Config](environ, defaults)
	if err != nil {
		return c, err
	}
	return c, c.validate()
}

// MinSecretBytes is the shortest ADMIN_TOKEN, CRON_SECRET and IDEMPOTENCY_SECRET accepted: 32
// bytes, the output of `openssl rand -hex 16` at the least (`openssl rand -hex 32` is better).
const MinSecretBytes = 32

// checkSecrets refuses a secret too short to withstand guessing, and a missing
// IDEMPOTENCY_SECRET; an empty ADMIN_TOKEN or CRON_SECRET is allowed (it locks its routes).
func (c Config) checkSecrets() error {
	var errs []error
	for _, s := range []struct {
		name, value string
		required    bool
	}{
		{"ADMIN_TOKEN", c.AdminToken, false},
		{"CRON_SECRET", c.CronSecret, false},
		{"IDEMPOTENCY_SECRET", c.IdempotencySecret, true},
	} {
		switch {
		case s.value == "" && !s.required:
		case s.value == "":
			errs = append(errs, fmt.Errorf("%s is required: at least %d random bytes (openssl rand -hex 32)",
				s.name, MinSecretBytes))
		case len(s.value) < MinSecretBytes:
			errs = append(errs, fmt.Errorf("%s is %d bytes long; it must be at least %d (openssl rand -hex 32)",
				s.name, len(s.value), MinSecretBytes))
		}
	}
	return errors.Join(errs...)
}

// validate refuses a short or missing secret (checkSecrets), negative rate limits, and a lease
// that a request could outlive: a retry would then run the request a second time while the
// first still runs. It reports every problem at once.
func (c Config) validate() error {
	errs := []error{c.checkSecrets()}
	r := c.RateLimits
	for _, v := range []float64{r.Reads, r.Writes, r.SDK, r.Anonymous} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("GATEWAY_RATE_LIMIT_* must be 0 (off) or more, not %v", v))
			break
		}
	}
	if c.PublishTimeout <= 0 || c.StatementTimeout < 0 {
		errs = append(errs, fmt.Errorf("GATEWAY_PUBLISH_TIMEOUT (%s) must be positive, GATEWAY_STATEMENT_TIMEOUT (%s) 0 or more",
			c.PublishTimeout, c.StatementTimeout))
	}
	if c.RequestTimeout <= 0 || c.IdempotencyLease < 2*c.RequestTimeout {
		errs = append(errs, fmt.Errorf("GATEWAY_IDEMPOTENCY_LEASE (%s) must be at least twice GATEWAY_REQUEST_TIMEOUT (%s), which must be positive",
			c.IdempotencyLease, c.RequestTimeout))
	}
	return errors.Join(errs...)
}

// withDefaults fills the zero values of a Config built by hand rather than loaded, so that a
// zero lease never lets duplicates run concurrently and a zero timeout never cuts a shutdown.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8080"
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 15 * time.Second
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.IdempotencyLease <= 0 {
		c.IdempotencyLease = 2 * c.RequestTimeout
	}
	if c.IdempotencyRetention <= 0 {
		c.IdempotencyRetention = 24 * time.Hour
	}
	return c
}
