package ports

import "net/http"

type whoamiResponse struct {
	CompanyID   string `json:"company_id"`
	Environment string `json:"environment"`
	KeyKind     string `json:"key_kind"`
	KeyID       string `json:"key_id"`
}

// whoami serves GET /api/v1/management/whoami: which company and environment the presented key
// stands for, so that partners can check their configuration.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	writeJSON(w, http.StatusOK, whoamiResponse{
		CompanyID:   p.CompanyID.String(),
		Environment: string(p.Environment),
		KeyKind:     string(p.KeyKind),
		KeyID:       p.KeyID.String(),
	})
	return nil
}
