package ports

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/domain"
)

type apiKeyResponse struct {
	ID          string `json:"id"`
	CompanyID   string `json:"company_id"`
	Type        string `json:"type"`
	Kind        string `json:"kind"`
	Environment string `json:"environment"`
	Prefix      string `json:"prefix"`
	CreatedAt   string `json:"created_at"`
	// Key is the new key itself, shown only in this response.
	Key string `json:"key"`
}

type rollAPIKeyResponse struct {
	APIKey apiKeyResponse `json:"api_key"`
}

// rollAPIKey serves POST /api/v1/admin/companies/{id}/keys/{kind_env}/roll: it revokes the
// company's active key of that type and returns the new one, once.
func (s *Server) rollAPIKey(w http.ResponseWriter, r *http.Request) error {
	vars := mux.Vars(r)
	companyID, err := uuid.Parse(vars["id"])
	if err != nil {
		// An id that cannot exist is as unknown as one that does not.
		return domain.ErrNotFound
	}
	t, err := domain.ParseKeyType(vars["kind_env"])
	if err != nil {
		return err
	}
	issued, err := s.app.Commands.RollAPIKey.Handle(r.Context(), command.RollAPIKey{CompanyID: companyID, Type: t})
	if err != nil {
		return err
	}
	k := issued.Key
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, rollAPIKeyResponse{APIKey: apiKeyResponse{
		ID:          k.ID().String(),
		CompanyID:   k.CompanyID().String(),
		Type:        t.String(),
		Kind:        string(t.Kind),
		Environment: string(t.Environment),
		Prefix:      k.DisplayPrefix(),
		CreatedAt:   events.FormatTime(k.CreatedAt()),
		Key:         issued.Plain,
	}})
	return nil
}
