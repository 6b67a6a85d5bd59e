package service_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/services/payment-projection/service"
)

// The projection's own variables: unset, the defaults (one worker per replica: at moderate
// rates more workers cut the same messages into more transactions, docs/BENCHMARKS.md); set,
// their values; malformed, an error that names the variable.
func TestLoadConfigReadsTheProjectionVariables(t *testing.T) {
	for _, name := range []string{"PAYMENT_PROJECTION_WORKERS", "PAYMENT_PROJECTION_BATCH", "PAYMENT_EXPIRY_INTERVAL"} {
		t.Setenv(name, "") // restored after the test
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := service.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 1 || cfg.BatchSize != 500 || cfg.ExpiryInterval != 5*time.Second {
		t.Fatalf("defaults %+v; want 1 worker, batches of 500, expiry every 5s", cfg)
	}

	t.Setenv("PAYMENT_PROJECTION_WORKERS", "3")
	t.Setenv("PAYMENT_PROJECTION_BATCH", "200")
	if cfg, err = service.LoadConfig(); err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 3 || cfg.BatchSize != 200 {
		t.Fatalf("read %+v; want 3 workers, batches of 200", cfg)
	}

	t.Setenv("PAYMENT_PROJECTION_WORKERS", "some")
	if _, err := service.LoadConfig(); err == nil || !strings.Contains(err.Error(), "PAYMENT_PROJECTION_WORKERS") {
		t.Fatalf("PAYMENT_PROJECTION_WORKERS=some: %v; want an error naming the variable", err)
	}
}
