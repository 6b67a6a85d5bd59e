package ports

import "net/http"

type listCompaniesResponse struct {
	Companies []companyResponse `json:"companies"`
}

// listCompanies serves GET /api/v1/admin/companies: every company, newest first, no keys.
func (s *Server) listCompanies(w http.ResponseWriter, r *http.Request) error {
	companies, err := s.app.Queries.ListCompanies.Handle(r.Context())
	if err != nil {
		return err
	}
	resp := listCompaniesResponse{Companies: make([]companyResponse, 0, len(companies))}
	for _, c := range companies {
		resp.Companies = append(resp.Companies, newCompanyResponse(c))
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
