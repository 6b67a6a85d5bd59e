package service_test

import (
	"testing"
	"time"

	"github.com/payplat/platform/services/gateway/service"
)

// The dashboard's settings come from the environment, with the idle expiry of issue 18 (12 h)
// unless DASHBOARD_SESSION_IDLE says otherwise.
func TestDashboardConfigFromTheEnvironment(t *testing.T) {
	t.Parallel()
	def, err := service.LoadFrom(map[string]string{"IDEMPOTENCY_SECRET": testIdempotencySecret})
	if err != nil {
		t.Fatal(err)
	}
	if d := def.Dashboard; d.SessionIdle != 12*time.Hour || d.MaxStreams != 500 || d.Heartbeat != 15*time.Second ||
		d.APIReferenceURL != "" {
		t.Errorf("defaults: %+v", d)
	}
	cfg, err := service.LoadFrom(map[string]string{"IDEMPOTENCY_SECRET": testIdempotencySecret, "DASHBOARD_SESSION_IDLE": "30m", "DASHBOARD_MAX_STREAMS": "7",
		"DASHBOARD_SSE_HEARTBEAT": "5s", "DASHBOARD_API_REFERENCE_URL": "https://docs.example.com/api"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Dashboard; d.SessionIdle != 30*time.Minute || d.MaxStreams != 7 || d.Heartbeat != 5*time.Second ||
		d.APIReferenceURL != "https://docs.example.com/api" {
		t.Errorf("from the environment: %+v", d)
	}
	if _, err := service.LoadFrom(map[string]string{"IDEMPOTENCY_SECRET": testIdempotencySecret, "DASHBOARD_SESSION_IDLE": "soon"}); err == nil {
		t.Error("a bad idle expiry was accepted")
	}
}
