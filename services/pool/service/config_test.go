package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/services/pool/service"
)

// The pool's own variables: unset, the defaults; set, their values; malformed, an error that
// names the variable (the service then refuses to start).
func TestLoadConfigReadsThePoolVariables(t *testing.T) {
	cfg, err := service.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BatchSize != 1000 || cfg.MaxAckPending != 4096 || cfg.AckWait != 0 {
		t.Fatalf("defaults %+v; want batch 1000, max ack pending 4096, ack wait 0 (the bus default)", cfg)
	}

	t.Setenv("POOL_BATCH_SIZE", "64")
	t.Setenv("POOL_MAX_ACK_PENDING", "512")
	t.Setenv("POOL_ACK_WAIT", "20s")
	cfg, err = service.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BatchSize != 64 || cfg.MaxAckPending != 512 || cfg.AckWait != 20*time.Second {
		t.Fatalf("read %+v; want batch 64, max ack pending 512, ack wait 20s", cfg)
	}
	specs := service.Consumers(cfg)
	for _, s := range specs {
		if s.MaxAckPending != 512 || s.AckWait != 20*time.Second {
			t.Errorf("consumer %s: max ack pending %d, ack wait %s; want 512 and 20s", s.Durable, s.MaxAckPending, s.AckWait)
		}
	}

	t.Setenv("POOL_BATCH_SIZE", "many")
	if _, err := service.LoadConfig(); err == nil || !strings.Contains(err.Error(), "POOL_BATCH_SIZE") {
		t.Fatalf("POOL_BATCH_SIZE=many: %v; want an error naming the variable", err)
	}
}
