package dashboard

import (
	"net/http"

	"github.com/payplat/platform/services/gateway/domain"
)

// overviewView is the overview page's data.
type overviewView struct {
	Pool     domain.PoolBalance
	Payments []domain.Payment
	Health   domain.WebhookHealth
	Rate     float64
	HasRate  bool
	Endpoint domain.WebhookEndpoint
	HasHook  bool
}

// recentPayments is how many payments the overview shows.
const recentPayments = 10

// overview serves GET /dashboard/: the pool against its threshold, the latest payments (kept
// current by live updates) and how webhook deliveries are doing.
func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request, s *session) {
	ctx, p := r.Context(), s.Principal
	var v overviewView
	var err error
	if v.Pool, err = d.Pool.Balance(ctx, p.CompanyID, p.Environment); err != nil {
		d.fail(w, r, s, err)
		return
	}
	if v.Payments, _, err = d.Payments.List(ctx, p, domain.PaymentFilter{Limit: recentPayments}); err != nil {
		d.fail(w, r, s, err)
		return
	}
	if v.Health, err = d.Webhooks.Health(ctx, p); err != nil {
		d.fail(w, r, s, err)
		return
	}
	v.Rate, v.HasRate = v.Health.SuccessRate()
	if v.Endpoint, v.HasHook, err = d.Webhooks.Endpoint(ctx, p); err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "overview", view{Title: "Overview", Nav: "overview", Session: s, Data: v})
}
