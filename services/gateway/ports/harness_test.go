package ports_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/api/apitest"
	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/pkg/logx"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/ports"
	"github.com/payplat/platform/services/gateway/service"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// gateway is the real router on a fresh database, served by httptest.
type gateway struct {
	t   *testing.T
	url string
	api *ports.Server
	// client checks every exchange against the OpenAPI document (api/openapi.yaml).
	client     *http.Client
	db         *pgxpool.Pool
	adminToken string
	cronSecret string
	logs       *testkit.Buffer
	// registry holds the gateway's metrics (served by the health listener, not the API).
	registry *prometheus.Registry
}

type setup struct {
	apiOpts []service.APIOption
	cfg     func(*service.Config)
	routes  func(*ports.Server)
	checks  func(db *pgxpool.Pool) map[string]health.Check
}

func newGateway(t *testing.T, opts ...func(*setup)) *gateway {
	t.Helper()
	var st setup
	for _, o := range opts {
		o(&st)
	}
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrations.Set()), migrations.Schema)
	g := &gateway{t: t, db: db, adminToken: gatewaytest.Token(), cronSecret: gatewaytest.Token(), logs: &testkit.Buffer{}}
	cfg, err := service.LoadFrom(map[string]string{"ADMIN_TOKEN": g.adminToken, "CRON_SECRET": g.cronSecret,
		"IDEMPOTENCY_SECRET": gatewaytest.Token()})
	if err != nil {
		t.Fatal(err)
	}
	// Rate limits off: the tests here exercise behaviour, many from one address; the rate
	// limit tests turn them on (withConfig).
	cfg.RateLimits = service.RateLimitConfig{}
	if st.cfg != nil {
		st.cfg(&cfg)
	}
	g.adminToken, g.cronSecret = cfg.AdminToken, cfg.CronSecret
	checks := map[string]health.Check{"postgres": health.PostgresCheck(db)}
	if st.checks != nil {
		checks = st.checks(db)
	}
	g.registry = prometheus.NewRegistry()
	api, err := service.NewAPI(cfg, db, checks, logx.New("json", "debug", g.logs), g.registry, st.apiOpts...)
	if err != nil {
		t.Fatal(err)
	}
	if st.routes != nil {
		st.routes(api)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	g.url, g.api = srv.URL, api
	g.client = contractClient(t, api)
	return g
}

// contractClient returns an HTTP client that checks every exchange against the OpenAPI document
// (issue 17), tolerating only the routes a test registered on api itself (withRoutes).
func contractClient(t *testing.T, api *ports.Server) *http.Client {
	t.Helper()
	own := mux.NewRouter()
	var routes []ports.Route
	if api != nil {
		routes = api.Routes()
	}
	for _, r := range routes {
		if r.Method != "" && !apitest.Documented(r.Method, r.Path) {
			own.Path(r.Path).Methods(r.Method)
		}
	}
	v, err := apitest.New(apitest.Options{Undocumented: func(r *http.Request) bool {
		var m mux.RouteMatch
		return own.Match(r, &m)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return v.Client(func(err error) { t.Errorf("contract (api/openapi.yaml): %v", err) })
}

func withConfig(f func(*service.Config)) func(*setup) { return func(s *setup) { s.cfg = f } }

func withAPIOption(o service.APIOption) func(*setup) {
	return func(s *setup) { s.apiOpts = append(s.apiOpts, o) }
}

func withRoutes(f func(*ports.Server)) func(*setup) { return func(s *setup) { s.routes = f } }

func withChecks(f func(*pgxpool.Pool) map[string]health.Check) func(*setup) {
	return func(s *setup) { s.checks = f }
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// decodeJSON fails the test unless r has the status wanted, and returns its body decoded as a T.
func decodeJSON[T any](t *testing.T, r response, status int) T {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var out T
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// request is what a test sends.
type request struct {
	method  string
	path    string
	body    io.Reader
	headers map[string]string
}

func (g *gateway) do(req request) response {
	g.t.Helper()
	resp, err := g.send(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	return resp
}

// send is do for goroutines other than the test's: it returns errors instead of failing.
func (g *gateway) send(req request) (response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, req.method, g.url+req.path, req.body)
	if err != nil {
		return response{}, err
	}
	if req.body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.headers {
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	resp, err := g.client.Do(r)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// newRequest is a request with h and the (name, value) pairs of headers as its headers.
func newRequest(method, path, body string, h map[string]string, headers ...string) request {
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	return request{method: method, path: path, body: r, headers: h}
}

func (g *gateway) adminRequest(method, path, body string, headers ...string) request {
	return newRequest(method, path, body, map[string]string{"Authorization": "Bearer " + g.adminToken}, headers...)
}

// call sends a request with an API key (empty: none) and the (name, value) pairs of headers.
func (g *gateway) call(key, method, path, body string, headers ...string) response {
	g.t.Helper()
	h := map[string]string{}
	if key != "" {
		h["x-api-key"] = key
	}
	return g.do(newRequest(method, path, body, h, headers...))
}

func (g *gateway) admin(method, path, body string, headers ...string) response {
	g.t.Helper()
	return g.do(g.adminRequest(method, path, body, headers...))
}

// company is a company created through the admin API, with its keys.
type company struct {
	ID   string
	Name string
	Keys map[string]string
}

func (g *gateway) createCompany(name string) company {
	g.t.Helper()
	resp := g.admin(http.MethodPost, "/api/v1/admin/companies", `{"name":`+quote(name)+`}`)
	if resp.status != http.StatusCreated {
		g.t.Fatalf("creating company: %d %s", resp.status, resp.body)
	}
	var out struct {
		Company struct{ ID, Name string }
		Keys    map[string]string
	}
	if err := json.Unmarshal(resp.body, &out); err != nil {
		g.t.Fatal(err)
	}
	return company{ID: out.Company.ID, Name: out.Company.Name, Keys: out.Keys}
}

func (g *gateway) whoami(headers map[string]string) response {
	g.t.Helper()
	return g.do(request{method: http.MethodGet, path: "/api/v1/management/whoami", headers: headers})
}

// assertError checks an error response: status, code, the body's request id equal to the
// X-Request-Id header, and an optional field.
func assertError(t *testing.T, r response, status int, code string, field ...string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want JSON", ct)
	}
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok || len(m) != 1 {
		t.Fatalf("body is not {\"error\":{...}}: %s", r.body)
	}
	if e["code"] != code {
		t.Errorf("code = %v, want %s", e["code"], code)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("empty message: %s", r.body)
	}
	id := r.header.Get("X-Request-Id")
	if id == "" || e["request_id"] != id {
		t.Errorf("request_id = %v, X-Request-Id = %q; want equal and set", e["request_id"], id)
	}
	if len(field) > 0 && e["field"] != field[0] {
		t.Errorf("field = %v, want %s", e["field"], field[0])
	}
	if len(field) == 0 {
		if _, has := e["field"]; has {
			t.Errorf("unexpected field in %s", r.body)
		}
	}
	return e
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
