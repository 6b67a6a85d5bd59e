package dashboard

import (
	"net/http"
	"net/url"

	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// paymentStatuses are the values of the payments list's status filter (SPEC §4.7).
var paymentStatuses = []string{domain.PaymentPending, domain.PaymentConfirmed, domain.PaymentFailed}

// simulateMerchants is how many of the newest merchants the simulate form offers; any other
// merchant is simulated from its own page.
const simulateMerchants = 100

// paymentsView is the payments page's data.
type paymentsView struct {
	Payments  []domain.Payment
	Status    string
	Statuses  []string
	Pager     pager
	Merchants []domain.DashboardMerchant
}

// payments serves GET /dashboard/payments: the payments by status, page by page, new ones
// appearing by live update; in test mode, a simulated payment.
func (d *Dashboard) payments(w http.ResponseWriter, r *http.Request, s *session) {
	notice := ""
	if r.URL.Query().Get("simulated") != "" {
		notice = "Simulated payment confirmed: created, processing and confirmed were published."
	}
	d.renderPayments(w, r, s, http.StatusOK, notice, nil, nil)
}

func (d *Dashboard) renderPayments(w http.ResponseWriter, r *http.Request, s *session, status int, notice string,
	errs map[string]string, form url.Values) {
	q, page, ok := d.listPage(w, r, s)
	if !ok {
		return
	}
	var err error
	v := paymentsView{Status: q.Get("status"), Statuses: paymentStatuses,
		Pager: pager{Page: page, Total: -1, query: q, path: Prefix + "/payments"}}
	f := domain.PaymentFilter{Status: v.Status, Limit: pageSize, Offset: v.Pager.offset()}
	if v.Payments, v.Pager.HasMore, err = d.Payments.List(r.Context(), s.Principal, f); err != nil {
		d.fail(w, r, s, err)
		return
	}
	if s.Test() {
		if v.Merchants, _, err = d.Merchants.Page(r.Context(), s.Principal, simulateMerchants, 0); err != nil {
			d.fail(w, r, s, err)
			return
		}
	}
	d.render(w, r, status, "payments", view{Title: "Payments", Nav: "payments", Session: s, Notice: notice,
		Errors: errs, Form: form, Data: v})
}

// simulatePayment serves POST /dashboard/payments (test mode): the API's simulated payment
// (merchant checked first, then the amount), back to where the form was.
func (d *Dashboard) simulatePayment(w http.ResponseWriter, r *http.Request, s *session) {
	amount := r.PostFormValue("amount")
	merchantID := r.PostFormValue("merchant_id")
	_, err := ports.SimulatePayment(r.Context(), d.Payments, r.URL.Path, merchantID, &amount,
		r.Header.Get("Idempotency-Key"))
	back := r.PostFormValue("back")
	if err != nil {
		status, errs, ok := formErrors(err)
		if !ok {
			d.fail(w, r, s, err)
			return
		}
		if back == "merchant" {
			r.SetPathValue("id", merchantID)
			d.renderMerchant(w, r, s, status, "", errs, r.PostForm)
			return
		}
		d.renderPayments(w, r, s, status, "", errs, r.PostForm)
		return
	}
	if back == "merchant" {
		redirect(w, r, Prefix+"/merchants/"+url.PathEscape(merchantID)+"?simulated=1")
		return
	}
	redirect(w, r, Prefix+"/payments?simulated=1")
}

// payment serves GET /dashboard/payments/{id}: every field of the payment (SPEC §2.7).
func (d *Dashboard) payment(w http.ResponseWriter, r *http.Request, s *session) {
	pm, err := d.Payments.Get(r.Context(), s.Principal, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "payment", view{Title: "Payment " + shortID(pm.ID), Nav: "payments", Session: s,
		Data: pm})
}
