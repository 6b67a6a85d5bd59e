package dashboard

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// poolView is the pool page's data.
type poolView struct {
	Balance   domain.PoolBalance
	Movements []domain.PoolTransaction
	Type      string
	Types     []string
	Pager     pager
	Chart     chart
}

// chartMovements is how many of the latest movements the balance chart draws (one page of the
// API's list at its largest size).
const chartMovements = 100

// pool serves GET /dashboard/pool: the balance against its threshold, the settings and, in test
// mode, a simulated deposit; the balance over the latest movements; the movements by type,
// page by page.
func (d *Dashboard) pool(w http.ResponseWriter, r *http.Request, s *session) {
	d.renderPool(w, r, s, http.StatusOK, poolNotices[r.URL.Query().Get("saved")], nil, nil)
}

// poolNotices confirm the pool's forms after their redirect.
var poolNotices = map[string]string{
	"settings": "Pool settings saved.",
	"deposit":  "Simulated deposit recorded; pool.deposit_received was sent.",
}

func (d *Dashboard) renderPool(w http.ResponseWriter, r *http.Request, s *session, status int, notice string,
	errs map[string]string, form url.Values) {
	q, page, ok := d.listPage(w, r, s)
	if !ok {
		return
	}
	ctx, p := r.Context(), s.Principal
	v := poolView{Type: q.Get("type"), Types: domain.PoolTransactionTypes,
		Pager: pager{Page: page, query: q, path: Prefix + "/pool"}}
	if v.Type != "" && !slices.Contains(domain.PoolTransactionTypes, v.Type) {
		d.fail(w, r, s, validation.Invalid("type", "must be one of DEPOSIT, DEBIT, CREDIT, WITHDRAWAL"))
		return
	}
	var err error
	if v.Balance, err = d.Pool.Balance(ctx, p.CompanyID, p.Environment); err != nil {
		d.fail(w, r, s, err)
		return
	}
	list, err := d.Pool.Transactions(ctx, p.CompanyID, p.Environment, domain.PoolTransactionFilter{Type: v.Type,
		Limit: pageSize, Offset: int64(v.Pager.offset())})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	v.Movements, v.Pager.Total = list.Transactions, int(list.Total)
	v.Pager.HasMore = int64(v.Pager.offset()+len(list.Transactions)) < list.Total
	latest, err := d.Pool.Transactions(ctx, p.CompanyID, p.Environment, domain.PoolTransactionFilter{Limit: chartMovements})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	v.Chart = balanceChart(latest.Transactions, v.Balance.LowThreshold)
	d.render(w, r, status, "pool", view{Title: "Pool", Nav: "pool", Session: s, Notice: notice, Errors: errs,
		Form: form, Data: v})
}

// updatePoolSettings serves POST /dashboard/pool/settings: the threshold and auto top-up, both
// sent (an unchecked box sends its hidden "false"), through the API's settings change.
func (d *Dashboard) updatePoolSettings(w http.ResponseWriter, r *http.Request, s *session) {
	threshold := r.PostFormValue("low_threshold")
	auto := lastValue(r.PostForm["auto_top_up_enabled"]) == "true"
	if _, err := ports.UpdatePoolSettings(r.Context(), d.Pool, &threshold, &auto); err != nil {
		d.poolFormError(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/pool?saved=settings")
}

// simulateDeposit serves POST /dashboard/pool/deposits (test mode): the API's simulated
// deposit, de-duplicated on the form's Idempotency-Key.
func (d *Dashboard) simulateDeposit(w http.ResponseWriter, r *http.Request, s *session) {
	amount := r.PostFormValue("amount")
	if _, err := ports.SimulatePoolDeposit(r.Context(), d.Pool, &amount, r.Header.Get("Idempotency-Key")); err != nil {
		d.poolFormError(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/pool?saved=deposit")
}

func (d *Dashboard) poolFormError(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status, errs, ok := formErrors(err)
	if !ok {
		d.fail(w, r, s, err)
		return
	}
	d.renderPool(w, r, s, status, "", errs, r.PostForm)
}

// lastValue is the last of a field's values: a checkbox after its hidden default.
func lastValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}
