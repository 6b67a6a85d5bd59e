package dashboard

import (
	"net/http"
	"net/url"

	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// merchantsView is the merchants page's data.
type merchantsView struct {
	Merchants []domain.DashboardMerchant
	Pager     pager
}

// merchants serves GET /dashboard/merchants: a page of merchants with balance and status, and
// the form that creates one.
func (d *Dashboard) merchants(w http.ResponseWriter, r *http.Request, s *session) {
	d.renderMerchants(w, r, s, http.StatusOK, nil, nil)
}

func (d *Dashboard) renderMerchants(w http.ResponseWriter, r *http.Request, s *session, status int,
	errs map[string]string, form url.Values) {
	q, page, ok := d.listPage(w, r, s)
	if !ok {
		return
	}
	var err error
	v := merchantsView{Pager: pager{Page: page, Total: -1, query: q, path: Prefix + "/merchants"}}
	v.Merchants, v.Pager.HasMore, err = d.Merchants.Page(r.Context(), s.Principal, pageSize, v.Pager.offset())
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	if v.Pager.Total, err = d.Merchants.Count(r.Context(), s.Principal); err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, status, "merchants", view{Title: "Merchants", Nav: "merchants", Session: s, Errors: errs,
		Form: form, Data: v})
}

// createMerchant serves POST /dashboard/merchants: the API's merchant creation (same checks,
// same errors, the same merchant id for a repeated Idempotency-Key), then the new merchant's
// page with its wallet.
func (d *Dashboard) createMerchant(w http.ResponseWriter, r *http.Request, s *session) {
	m, err := ports.CreateMerchant(r.Context(), d.Merchants, r.PostFormValue("name"), r.PostFormValue("email"),
		r.Header.Get("Idempotency-Key"))
	if err != nil {
		status, errs, ok := formErrors(err)
		if !ok {
			d.fail(w, r, s, err)
			return
		}
		d.renderMerchants(w, r, s, status, errs, r.PostForm)
		return
	}
	redirect(w, r, Prefix+"/merchants/"+url.PathEscape(m.ID)+"?created=1")
}

// merchantView is a merchant's page: the merchant, a page of its ledger, and the merchants
// the simulate form may pick (only itself here).
type merchantView struct {
	Merchant domain.DashboardMerchant
	Ledger   domain.MerchantLedger
	Pager    pager
	Created  bool
	Locked   bool
}

// merchant serves GET /dashboard/merchants/{id}: details, status (a platform status read-only
// with its reason) and the ledger with running balance, page by page.
func (d *Dashboard) merchant(w http.ResponseWriter, r *http.Request, s *session) {
	d.renderMerchant(w, r, s, http.StatusOK, "", nil, nil)
}

func (d *Dashboard) renderMerchant(w http.ResponseWriter, r *http.Request, s *session, status int, notice string,
	errs map[string]string, form url.Values) {
	q, page, ok := d.listPage(w, r, s)
	if !ok {
		return
	}
	var err error
	id := r.PathValue("id")
	v := merchantView{Created: q.Get("created") == "1"}
	if v.Merchant, err = d.Merchants.Get(r.Context(), s.Principal, id); err != nil {
		d.fail(w, r, s, err)
		return
	}
	v.Locked = domain.IsPlatformStatus(v.Merchant.Status)
	v.Pager = pager{Page: page, query: q, path: Prefix + "/merchants/" + url.PathEscape(v.Merchant.ID)}
	v.Ledger, err = d.Merchants.LedgerPage(r.Context(), s.Principal, id, pageSize, v.Pager.offset())
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	v.Pager.Total = v.Ledger.TotalCount
	v.Pager.HasMore = v.Pager.offset()+len(v.Ledger.Entries) < v.Ledger.TotalCount
	switch {
	case notice != "":
	case v.Created:
		notice = "Merchant created, with its own USDC wallet."
	case q.Get("simulated") == "1":
		notice = "Simulated payment confirmed: the ledger below shows its credit."
	}
	d.render(w, r, status, "merchant", view{Title: v.Merchant.Name, Nav: "merchants", Session: s, Notice: notice,
		Errors: errs, Form: form, Data: v})
}

// setMerchantStatus serves POST /dashboard/merchants/{id}/status: ACTIVE or PAUSED, through
// the API's status change (403 MERCHANT_STATUS_LOCKED from a platform status).
func (d *Dashboard) setMerchantStatus(w http.ResponseWriter, r *http.Request, s *session) {
	status := r.PostFormValue("status")
	res, err := ports.SetMerchantStatus(r.Context(), d.Merchants, &s.Principal, r.PathValue("id"), &status, "")
	if err != nil {
		code, errs, ok := formErrors(err)
		if !ok || code == http.StatusNotFound {
			d.fail(w, r, s, err)
			return
		}
		d.renderMerchant(w, r, s, code, "", errs, r.PostForm)
		return
	}
	redirect(w, r, Prefix+"/merchants/"+url.PathEscape(res.ID))
}
