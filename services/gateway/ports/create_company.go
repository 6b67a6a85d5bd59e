package ports

import (
	"net/http"

	"github.com/payplat/platform/services/gateway/app/command"
)

type createCompanyRequest struct {
	Name string `json:"name"`
}

type createCompanyResponse struct {
	Company companyResponse `json:"company"`
	// Keys maps the key type (sk_test, sk_live, pk_test, pk_live) to the key, shown only here.
	Keys map[string]string `json:"keys"`
}

// createCompany serves POST /api/v1/admin/companies.
func (s *Server) createCompany(w http.ResponseWriter, r *http.Request) error {
	var req createCompanyRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	created, err := s.app.Commands.CreateCompany.Handle(r.Context(), command.CreateCompany{Name: req.Name})
	if err != nil {
		return err
	}
	resp := createCompanyResponse{Company: newCompanyResponse(created.Company), Keys: map[string]string{}}
	for _, k := range created.Keys {
		resp.Keys[k.Key.Type().String()] = k.Plain
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, resp)
	return nil
}
