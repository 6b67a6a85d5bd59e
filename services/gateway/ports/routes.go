package ports

import (
	"net/http"

	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/services/gateway/domain"
)

// routes lists every route of the gateway and who may call it (DESIGN §5: secret keys on all
// management and dashboard routes; publishable keys only on pool transactions and the SDK
// payment endpoint, with RequireKey(domain.Secret, domain.Publishable)).
//
// /metrics is not one of them: it is served only on the gateway's health listener (HEALTH_ADDR),
// like every service's, never on the public API listener (issue 16).
func (s *Server) routes(d Deps) {
	healthz, readyz, _ := health.Handlers(d.Checks, d.Registry, health.WithLogger(d.Logger))
	s.Handle(http.MethodGet, "/healthz", healthz, Public)
	s.Handle(http.MethodGet, "/readyz", readyz, Public)
	s.docsRoutes()

	s.HandleFunc(http.MethodPost, "/api/v1/admin/companies", s.createCompany, AdminToken)
	s.HandleFunc(http.MethodGet, "/api/v1/admin/companies", s.listCompanies, AdminToken)
	s.HandleFunc(http.MethodPost, "/api/v1/admin/companies/{id}/keys/{kind_env}/roll", s.rollAPIKey,
		AdminToken)

	s.HandleFunc(http.MethodGet, "/api/v1/management/whoami", s.whoami, RequireKey(domain.Secret))
	s.merchantRoutes()
	s.webhookRoutes()
	s.poolRoutes()
	s.paymentRoutes()
}
