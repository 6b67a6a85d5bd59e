package ports_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/pkg/testkit"
)

func TestReadinessFailsWhenNATSIsClosedAndLogsTheChangeOnceAtInfo(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	g := newGateway(t, withChecks(func(db *pgxpool.Pool) map[string]health.Check {
		return map[string]health.Check{"postgres": health.PostgresCheck(db), "nats": health.NATSCheck(nc)}
	}))
	if r := g.do(request{method: http.MethodGet, path: "/healthz"}); r.status != http.StatusOK {
		t.Errorf("healthz: %d %s", r.status, r.body)
	}
	r := g.do(request{method: http.MethodGet, path: "/readyz"})
	checks, _ := r.json(t)["checks"].(map[string]any)
	if r.status != http.StatusOK || checks["postgres"] != "ok" || checks["nats"] != "ok" {
		t.Errorf("readyz: %d %s", r.status, r.body)
	}
	nc.Close()
	for range 3 {
		if r := g.do(request{method: http.MethodGet, path: "/readyz"}); r.status != http.StatusServiceUnavailable {
			t.Errorf("readyz with NATS closed: %d %s", r.status, r.body)
		}
	}
	// Not ready is an answer, not an error of the gateway: the transition is logged once at
	// info, and no probe is logged as an error or a warning.
	failing := 0
	for _, rec := range g.logs.Records(t) {
		if rec["msg"] == "readiness check failing" && rec["level"] == "INFO" {
			failing++
		}
		if rec["level"] == "ERROR" || rec["level"] == "WARN" {
			t.Errorf("logged while not ready: %v", rec)
		}
	}
	if failing != 1 {
		t.Errorf("the readiness transition was logged %d times, want once", failing)
	}
}

func TestReadinessFailsWhenDatabasePoolClosed(t *testing.T) {
	t.Parallel()
	var checked *pgxpool.Pool
	g := newGateway(t, withChecks(func(db *pgxpool.Pool) map[string]health.Check {
		checked = db
		return map[string]health.Check{"postgres": health.PostgresCheck(db)}
	}))
	if r := g.do(request{method: http.MethodGet, path: "/readyz"}); r.status != http.StatusOK {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	checked.Close()
	r := g.do(request{method: http.MethodGet, path: "/readyz"})
	checks, _ := r.json(t)["checks"].(map[string]any)
	if r.status != http.StatusServiceUnavailable || !strings.HasPrefix(checks["postgres"].(string), "error") {
		t.Errorf("readyz with the pool closed: %d %s", r.status, r.body)
	}
	if r := g.do(request{method: http.MethodGet, path: "/healthz"}); r.status != http.StatusOK {
		t.Errorf("healthz is liveness only, got %d", r.status)
	}
}

// The API counts its requests by route, never by raw path. The metrics are not on the API (a
// public listener: issue 16) but on the health listener (service.TestServiceRunsAndShutsDownGracefully),
// which serves the same registry with health.Handlers, as here.
func TestAPICountsRequestsByRouteNeverByRawPath(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createCompany("Acme")
	g.whoami(map[string]string{"X-Api-Key": c.Keys["sk_test"]})
	g.do(request{method: http.MethodGet, path: "/no/such/" + c.ID})
	assertError(t, g.do(request{method: http.MethodGet, path: "/metrics"}), http.StatusNotFound, "NOT_FOUND")
	_, _, metrics := health.Handlers(nil, g.registry)
	rec := httptest.NewRecorder()
	metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`http_requests_total{code="201",method="POST",route="/api/v1/admin/companies"} 1`,
		`http_requests_total{code="200",method="GET",route="/api/v1/management/whoami"} 1`,
		`http_requests_total{code="404",method="GET",route="unmatched"} 2`,
		`http_request_duration_seconds_bucket{method="GET",route="/api/v1/management/whoami",le="+Inf"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, c.ID) {
		t.Error("metrics carry a raw path")
	}
}
