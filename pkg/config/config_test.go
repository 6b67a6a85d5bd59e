package config_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/payplat/platform/pkg/config"
)

// serviceConfig is how a service uses the package: Common embedded, its own variables beside.
type serviceConfig struct {
	config.Common
	GatewayAddr   string          `env:"GATEWAY_ADDR" envDefault:"127.0.0.1:8080"`
	RetrySchedule []time.Duration `env:"WEBHOOK_RETRY_SCHEDULE" envDefault:"5m,15m,45m,2h,6h"`
	AdminToken    string          `env:"ADMIN_TOKEN,required"`
}

func serviceDefaults(c *serviceConfig) { c.HealthAddr = "127.0.0.1:9101" }

func TestCommonIsReadFromTheMapWithDefaultsForUnsetOrEmptyVariables(t *testing.T) {
	t.Parallel()
	defaults := config.Common{
		DataDir:         ".data",
		LogFormat:       "json",
		LogLevel:        "info",
		ShutdownTimeout: 15 * time.Second,
	}
	tests := []struct {
		name    string
		environ map[string]string
		want    config.Common
	}{
		{name: "nothing set", environ: map[string]string{}, want: defaults},
		{name: "nil map", environ: nil, want: defaults},
		{name: "empty values mean default", environ: map[string]string{"DATA_DIR": "", "LOG_FORMAT": "", "SHUTDOWN_TIMEOUT": ""}, want: defaults},
		{
			name: "everything set",
			environ: map[string]string{
				"DATABASE_URL":     "postgres://app:secret@db:5432/app",
				"NATS_URL":         "nats://nats:4222",
				"DATA_DIR":         "/var/lib/payplat",
				"LOG_FORMAT":       "text",
				"LOG_LEVEL":        "debug",
				"SHUTDOWN_TIMEOUT": "1m30s",
				"HEALTH_ADDR":      ":9100",
				"UNRELATED":        "ignored",
			},
			want: config.Common{
				DatabaseURL:     "postgres://app:secret@db:5432/app",
				NATSURL:         "nats://nats:4222",
				DataDir:         "/var/lib/payplat",
				LogFormat:       "text",
				LogLevel:        "debug",
				ShutdownTimeout: 90 * time.Second,
				HealthAddr:      ":9100",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.LoadFrom[config.Common](tt.environ)
			if err != nil {
				t.Fatalf("LoadFrom: %v", err)
			}
			if got != tt.want {
				t.Fatalf("LoadFrom = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadFromGivesAServiceConfigItsDefaultsUnlessTheEnvironmentSetsThem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		environ        map[string]string
		wantHealthAddr string
		wantGateway    string
		wantRetries    int
	}{
		{
			name:           "service default for HEALTH_ADDR",
			environ:        map[string]string{"ADMIN_TOKEN": "t"},
			wantHealthAddr: "127.0.0.1:9101", wantGateway: "127.0.0.1:8080", wantRetries: 5,
		},
		{
			name:           "empty HEALTH_ADDR keeps the service default",
			environ:        map[string]string{"ADMIN_TOKEN": "t", "HEALTH_ADDR": ""},
			wantHealthAddr: "127.0.0.1:9101", wantGateway: "127.0.0.1:8080", wantRetries: 5,
		},
		{
			name:           "environment wins over defaults",
			environ:        map[string]string{"ADMIN_TOKEN": "t", "HEALTH_ADDR": "0.0.0.0:9200", "GATEWAY_ADDR": ":8081", "WEBHOOK_RETRY_SCHEDULE": "1s,2s"},
			wantHealthAddr: "0.0.0.0:9200", wantGateway: ":8081", wantRetries: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.LoadFrom(tt.environ, serviceDefaults)
			if err != nil {
				t.Fatalf("LoadFrom: %v", err)
			}
			if got.HealthAddr != tt.wantHealthAddr || got.GatewayAddr != tt.wantGateway || len(got.RetrySchedule) != tt.wantRetries {
				t.Fatalf("LoadFrom = %+v", got)
			}
			if got.DataDir != ".data" || got.ShutdownTimeout != 15*time.Second {
				t.Fatalf("embedded Common not loaded: %+v", got.Common)
			}
		})
	}
}

func TestLoadFromListsEveryBadVariableAndReturnsNoConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		environ  map[string]string
		wantVars []string
		wantText []string
	}{
		{
			name:     "bad log format",
			environ:  map[string]string{"ADMIN_TOKEN": "t", "LOG_FORMAT": "yaml"},
			wantVars: []string{"LOG_FORMAT"},
			wantText: []string{`LOG_FORMAT: logx: invalid format "yaml"`},
		},
		{
			name:     "missing required variable",
			environ:  map[string]string{},
			wantVars: []string{"ADMIN_TOKEN"},
			wantText: []string{`ADMIN_TOKEN: required environment variable "ADMIN_TOKEN" is not set`},
		},
		{
			name: "every bad variable is listed",
			environ: map[string]string{
				"LOG_FORMAT":             "yaml",
				"LOG_LEVEL":              "loud",
				"SHUTDOWN_TIMEOUT":       "soon",
				"WEBHOOK_RETRY_SCHEDULE": "5m,later",
			},
			wantVars: []string{"LOG_FORMAT", "LOG_LEVEL", "SHUTDOWN_TIMEOUT", "WEBHOOK_RETRY_SCHEDULE", "ADMIN_TOKEN"},
			wantText: []string{`LOG_LEVEL: logx: invalid level "loud"`, `SHUTDOWN_TIMEOUT: unable to parse duration: time: invalid duration "soon"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.LoadFrom(tt.environ, serviceDefaults)
			var cerr *config.Error
			if !errors.As(err, &cerr) {
				t.Fatalf("LoadFrom error %v, want *config.Error", err)
			}
			if got.HealthAddr != "" {
				t.Errorf("LoadFrom returned a partial config on error: %+v", got)
			}
			var vars []string
			for _, p := range cerr.Problems {
				vars = append(vars, p.Var)
			}
			if strings.Join(vars, ",") != strings.Join(tt.wantVars, ",") {
				t.Errorf("bad variables %v, want %v", vars, tt.wantVars)
			}
			for _, text := range tt.wantText {
				if !strings.Contains(err.Error(), text) {
					t.Errorf("error %q does not contain %q", err, text)
				}
			}
		})
	}
}

func TestAConfigErrorUnwrapsToTheEnvLibrarysError(t *testing.T) {
	t.Parallel()
	_, err := config.LoadFrom[serviceConfig](map[string]string{})
	var notSet env.VarIsNotSetError
	if !errors.As(err, &notSet) || notSet.Key != "ADMIN_TOKEN" {
		t.Fatalf("errors.As(VarIsNotSetError) on %v = %+v", err, notSet)
	}
}

// The test sets the process environment, so it cannot run in parallel.
func TestLoadReadsTheProcessEnvironmentAndLoadFromDoesNot(t *testing.T) {
	t.Setenv("DATA_DIR", "/from/process")
	t.Setenv("LOG_LEVEL", "warn")
	got, err := config.Load[config.Common]()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got.DataDir != "/from/process" || got.LogLevel != "warn" {
		t.Fatalf("Load = %+v", got)
	}
	// LoadFrom never falls back to the process environment.
	if got, _ := config.LoadFrom[config.Common](nil); got.DataDir != ".data" {
		t.Fatalf("LoadFrom(nil) read the process environment: %+v", got)
	}
}

func TestTheLoggerFollowsLogFormatAndLogLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, level string
		wantJSON      bool
		wantDebug     bool
	}{
		{format: "json", level: "info", wantJSON: true},
		{format: "text", level: "debug", wantDebug: true},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.level, func(t *testing.T) {
			t.Parallel()
			c, err := config.LoadFrom[config.Common](map[string]string{"LOG_FORMAT": tt.format, "LOG_LEVEL": tt.level})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			log := c.Logger(&buf)
			log.Debug("d")
			log.Info("i")
			out := buf.String()
			if strings.HasPrefix(out, "{") != tt.wantJSON || strings.Contains(out, "msg=d") != tt.wantDebug {
				t.Fatalf("logger output for %s/%s:\n%s", tt.format, tt.level, out)
			}
		})
	}
}
