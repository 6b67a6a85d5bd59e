// Package config loads service configuration from environment variables, once, in main
// (STYLE.md habit 2), with github.com/caarlos0/env/v11 struct tags. Common holds the variables
// of DESIGN.md §6 that every service reads; a service embeds it in its own Config:
//
//	type Config struct {
//		config.Common
//		RetrySchedule []time.Duration `env:"WEBHOOK_RETRY_SCHEDULE" envDefault:"5m,15m,45m,2h,6h"`
//	}
//
//	cfg, err := config.Load(func(c *Config) { c.HealthAddr = "127.0.0.1:9104" })
package config

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/payplat/platform/pkg/logx"
)

// Common is the configuration every service shares.
type Common struct {
	// DatabaseURL is the PostgreSQL connection string (DATABASE_URL). Empty means the caller
	// decides (the dev stack starts a local cluster).
	DatabaseURL string `env:"DATABASE_URL"`
	// NATSURL is the NATS server URL (NATS_URL). Empty means the caller decides (the dev
	// stack embeds a server).
	NATSURL string `env:"NATS_URL"`
	// NATSCreds is the file with the process's NATS credentials (NATS_CREDS): an NKey seed
	// (natsauth) or a .creds file (a user JWT and its seed). Empty connects without
	// credentials (a server without authorization).
	NATSCreds string `env:"NATS_CREDS"`
	// NATSCA is the PEM file of the certificate authority of the NATS servers' TLS
	// certificates (NATS_CA); empty uses the system's roots when the server asks for TLS.
	NATSCA string `env:"NATS_CA"`
	// DataDir is where local state lives (DATA_DIR, default ".data").
	DataDir string `env:"DATA_DIR" envDefault:".data"`
	// LogFormat is "json" (the default) or "text" (LOG_FORMAT).
	LogFormat LogFormat `env:"LOG_FORMAT" envDefault:"json"`
	// LogLevel is "debug", "info" (the default), "warn" or "error" (LOG_LEVEL).
	LogLevel LogLevel `env:"LOG_LEVEL" envDefault:"info"`
	// ShutdownTimeout bounds a graceful shutdown (SHUTDOWN_TIMEOUT, default 15s).
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"15s"`
	// HealthAddr is the listen address of the service's own /healthz, /readyz and /metrics
	// listener (HEALTH_ADDR). It has no tag default because each service has its own: set it
	// in the defaults function given to Load.
	HealthAddr string `env:"HEALTH_ADDR"`
	// Pprof serves Go's runtime profiles under /debug/pprof/ on the health listener (PPROF,
	// default false): what an operator reads to see where a service spends its CPU.
	Pprof bool `env:"PPROF" envDefault:"false"`
}

// Logger returns the logger LOG_FORMAT and LOG_LEVEL describe, writing to w.
func (c Common) Logger(w io.Writer) *slog.Logger {
	return logx.New(string(c.LogFormat), string(c.LogLevel), w)
}

// LogFormat is the value of LOG_FORMAT: logx.FormatJSON or logx.FormatText. Loading any other
// value fails.
type LogFormat string

// UnmarshalText accepts "json" or "text".
func (f *LogFormat) UnmarshalText(text []byte) error {
	if err := logx.CheckFormat(string(text)); err != nil {
		return err
	}
	*f = LogFormat(text)
	return nil
}

// LogLevel is the value of LOG_LEVEL, as logx.ParseLevel reads it. Loading a value it does
// not accept fails.
type LogLevel string

// UnmarshalText accepts what logx.ParseLevel accepts.
func (l *LogLevel) UnmarshalText(text []byte) error {
	if _, err := logx.ParseLevel(string(text)); err != nil {
		return err
	}
	*l = LogLevel(text)
	return nil
}

// Load reads a T from the process environment. See LoadFrom.
func Load[T any](defaults ...func(*T)) (T, error) {
	return LoadFrom(env.ToMap(os.Environ()), defaults...)
}

// LoadFrom reads a T from environ, a map of variable names to values (tests pass their own).
//
// T is a struct with `env` tags (nested and embedded structs are read too, so a service embeds
// Common). A variable that is unset or empty keeps the field's tag default (`envDefault`),
// else the value the defaults functions set, else the zero value; put a per-service default
// in defaults only for fields without an `envDefault` tag, because a tag default overwrites
// it. Variables are required only when tagged `required`.
//
// On failure it returns the zero T and an *Error that names every bad variable, not just the
// first.
func LoadFrom[T any](environ map[string]string, defaults ...func(*T)) (T, error) {
	if environ == nil {
		// env falls back to the process environment for a nil map; a test means "nothing set".
		environ = map[string]string{}
	}
	var cfg T
	for _, set := range defaults {
		set(&cfg)
	}
	err := env.ParseWithOptions(&cfg, env.Options{Environment: environ, RequiredIfNoDef: false})
	if err != nil {
		var zero T
		return zero, newError(&cfg, err)
	}
	return cfg, nil
}
