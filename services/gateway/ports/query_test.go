package ports_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// One strict query parser for every route (issue 16; the pool and webhook routes used to ignore
// what the payment and ledger routes refused): a parameter the route does not take, a name in
// another case, one given twice, or a malformed query string is 400 VALIDATION_ERROR naming it,
// after the credentials are checked and before anything else. The contract client checks each
// answer against api/openapi.yaml, which documents the 400 of every operation.
func TestEveryRouteRefusesUnknownQueryParameters(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	sk := g.createCompany("Acme Strict Queries").Keys["sk_test"]
	fill := strings.NewReplacer("{id}", uuid.NewString(), "{kind_env}", "sk_test", "{log_id}", uuid.NewString(),
		"{asset}", "init.js")
	routes := 0
	for _, route := range g.api.Routes() {
		if route.Method == "" {
			continue // the dashboard's HTML pages
		}
		routes++
		path := fill.Replace(route.Path)
		headers := map[string]string{}
		switch {
		case strings.HasPrefix(path, "/api/v1/admin/"):
			headers["Authorization"] = "Bearer " + g.adminToken
		case strings.HasPrefix(path, "/api/v1/cron/"):
			headers["Authorization"] = "Bearer " + g.cronSecret
		case strings.HasPrefix(path, "/api/v1/management/"), strings.HasPrefix(path, "/api/v1/dashboard/"),
			strings.HasPrefix(path, "/api/v1/payments/"):
			headers["x-api-key"] = sk
		}
		call := func(query string) response {
			return g.do(request{method: route.Method, path: path + "?" + query, headers: headers})
		}
		t.Run(route.Method+" "+route.Path, func(t *testing.T) {
			assertError(t, call("bogus=1"), http.StatusBadRequest, "VALIDATION_ERROR", "bogus")
			assertError(t, call("a=%zz"), http.StatusBadRequest, "VALIDATION_ERROR")
			for _, p := range route.Query {
				assertError(t, call(p+"=1&"+p+"=2"), http.StatusBadRequest, "VALIDATION_ERROR", p)
				upper := strings.ToUpper(p[:1]) + p[1:]
				assertError(t, call(upper+"=1"), http.StatusBadRequest, "VALIDATION_ERROR", upper)
				assertError(t, call(p+"=1&colour=red"), http.StatusBadRequest, "VALIDATION_ERROR", "colour")
			}
		})
	}
	if routes < 25 {
		t.Fatalf("only %d routes checked", routes)
	}
	// Without credentials the answer is 401 whatever the query: the query is checked after them.
	assertError(t, g.do(request{method: http.MethodGet, path: "/api/v1/management/pool/balance?bogus=1"}),
		http.StatusUnauthorized, "UNAUTHORIZED")
}
