package dashboard

import (
	"net/http"

	"github.com/payplat/platform/services/gateway/domain"
)

// developersView is the developers page's data.
type developersView struct {
	Principal    domain.Principal
	Keys         []domain.MaskedKey
	APIReference string
}

// developers serves GET /dashboard/developers: whoami (company, environment, key), the
// company's active keys masked, and the API reference.
func (d *Dashboard) developers(w http.ResponseWriter, r *http.Request, s *session) {
	keys, err := d.Sessions.ActiveKeys(r.Context(), s.Principal.CompanyID)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "developers", view{Title: "Developers", Nav: "developers", Session: s,
		Data: developersView{Principal: s.Principal, Keys: keys, APIReference: d.cfg.APIReferenceURL}})
}

// apiReference serves GET /dashboard/developers/api: the HTTP API's routes for partners.
func (d *Dashboard) apiReference(w http.ResponseWriter, r *http.Request, s *session) {
	d.render(w, r, http.StatusOK, "api", view{Title: "API reference", Nav: "developers", Session: s})
}
