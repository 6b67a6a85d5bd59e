package ports

import (
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/payplat/platform/api"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports/apidocs"
)

// docsRoutes serves the API's own contract (issue 17): the OpenAPI document the tests validate
// every exchange against, and the reference page rendered from it.
func (s *Server) docsRoutes() {
	s.Handle(http.MethodGet, "/api/v1/openapi.json", http.HandlerFunc(serveOpenAPI), Public)
	s.Handle(http.MethodGet, "/docs", http.HandlerFunc(apidocs.Page), Public)
	s.HandleFunc(http.MethodGet, "/docs/{asset}", s.docsAsset, Public)
}

// serveOpenAPI serves GET /api/v1/openapi.json: api/openapi.json as embedded at build time.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(api.JSON())
}

// docsAsset serves a file of the reference page; any other name is 404 in the API's format.
func (s *Server) docsAsset(w http.ResponseWriter, r *http.Request) error {
	if !apidocs.Asset(w, mux.Vars(r)["asset"]) {
		return errRouteNotFound
	}
	return nil
}

// Route is a method and path template the server answers.
type Route struct {
	Method string
	Path   string
	// Publishable says a publishable key may call the route.
	Publishable bool
	// Query lists the query parameters the route takes, sorted; it refuses any other.
	Query []string
}

// Routes lists the routes registered on the router (gorilla/mux Walk), in registration order. A
// subtree mounted with Mount (the dashboard) is listed with its prefix and no method.
func (s *Server) Routes() []Route {
	var out []Route
	_ = s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, _ := route.GetMethods()
		if len(methods) == 0 {
			out = append(out, Route{Path: tpl})
		}
		for _, m := range methods {
			a := s.access[m+" "+tpl]
			query := slices.Sorted(slices.Values(s.query[m+" "+tpl]))
			out = append(out, Route{Method: m, Path: tpl, Publishable: slices.Contains(a.keyKinds, domain.Publishable),
				Query: query})
		}
		return nil
	})
	return out
}
