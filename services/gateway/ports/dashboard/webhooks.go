package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// webhooksView is the webhooks page's data.
type webhooksView struct {
	Endpoint   domain.WebhookEndpoint
	Configured bool
	// Secret is the signing secret just created (first configuration or roll), shown once.
	Secret   string
	Logs     []domain.WebhookLogEntry
	Status   string
	Statuses []string
	// Older is the link to the next page of the log, empty on the last; Newest goes back to
	// the first.
	Older  string
	Newest string
}

// webhooks serves GET /dashboard/webhooks: the endpoint and its switch, the secret roll, and
// the delivery log by status, page by page (keyset: a deep page costs what the first does).
func (d *Dashboard) webhooks(w http.ResponseWriter, r *http.Request, s *session) {
	notice := ""
	if r.URL.Query().Get("saved") == "1" {
		notice = "Webhook endpoint saved."
	}
	d.renderWebhooks(w, r, s, http.StatusOK, notice, "", nil, nil)
}

func (d *Dashboard) renderWebhooks(w http.ResponseWriter, r *http.Request, s *session, status int, notice, secret string,
	errs map[string]string, form url.Values) {
	ctx, p, q := r.Context(), s.Principal, r.URL.Query()
	v := webhooksView{Status: q.Get("status"), Statuses: domain.WebhookStatuses, Secret: secret}
	if v.Status != "" && !slices.Contains(domain.WebhookStatuses, v.Status) {
		d.fail(w, r, s, validation.Invalid("status", "must be SUCCESS, FAILED or PENDING"))
		return
	}
	after, err := parseCursor(q.Get("after"))
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	if v.Endpoint, v.Configured, err = d.Webhooks.Endpoint(ctx, p); err != nil {
		d.fail(w, r, s, err)
		return
	}
	logs, next, err := d.Webhooks.LogPage(ctx, p, v.Status, after, pageSize)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	v.Logs = logs
	v.Older, v.Newest = logLinks(v.Status, next, after != nil)
	d.render(w, r, status, "webhooks", view{Title: "Webhooks", Nav: "webhooks", Session: s, Notice: notice,
		Errors: errs, Form: form, Data: v})
}

// logLinks returns the links to the next page of the log and back to the newest entries.
func logLinks(status string, next *domain.WebhookLogCursor, paged bool) (older, newest string) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	base := Prefix + "/webhooks"
	if paged {
		newest = base
		if len(q) > 0 {
			newest += "?" + q.Encode()
		}
	}
	if next != nil {
		q.Set("after", next.CreatedAt.UTC().Format(time.RFC3339Nano)+"_"+next.ID)
		older = base + "?" + q.Encode()
	}
	return older, newest
}

// parseCursor reads ?after=<created_at>_<id>; nil when absent.
func parseCursor(raw string) (*domain.WebhookLogCursor, error) {
	if raw == "" {
		return nil, nil
	}
	at, id, ok := strings.Cut(raw, "_")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || id == "" {
		return nil, validation.Invalid("after", "is not a position in the delivery log")
	}
	return &domain.WebhookLogCursor{CreatedAt: t, ID: id}, nil
}

// configureWebhooks serves POST /dashboard/webhooks/config: the URL and the enabled switch
// through the API's configuration (HTTPS and address checks are the dispatcher's). The first
// configuration creates the signing secret, which is shown once.
func (d *Dashboard) configureWebhooks(w http.ResponseWriter, r *http.Request, s *session) {
	u := strings.TrimSpace(r.PostFormValue("url"))
	enabled := lastValue(r.PostForm["enabled"]) == "true"
	change := domain.WebhookConfigChange{URL: &u, Enabled: &enabled}
	d.changeWebhooks(w, r, s, change, "Webhook endpoint saved.")
}

// rollWebhookSecret serves POST /dashboard/webhooks/secret: a new signing secret, shown once.
func (d *Dashboard) rollWebhookSecret(w http.ResponseWriter, r *http.Request, s *session) {
	if r.PostFormValue("confirm") != "yes" {
		d.renderWebhooks(w, r, s, http.StatusBadRequest, "", "", map[string]string{
			"confirm": "Tick the box to confirm: the current secret stops working at once."}, r.PostForm)
		return
	}
	d.changeWebhooks(w, r, s, domain.WebhookConfigChange{RollSecret: true}, "New signing secret created.")
}

// changeWebhooks applies change; a new secret is shown on this response only (no redirect: it
// must not travel in a URL), which is why the page is never cached.
func (d *Dashboard) changeWebhooks(w http.ResponseWriter, r *http.Request, s *session, change domain.WebhookConfigChange,
	done string) {
	cfg, err := d.Webhooks.Configure(r.Context(), s.Principal, change)
	if err != nil {
		status, errs, ok := formErrors(err)
		if !ok {
			d.fail(w, r, s, err)
			return
		}
		d.renderWebhooks(w, r, s, status, "", "", errs, r.PostForm)
		return
	}
	if cfg.Secret == "" {
		redirect(w, r, Prefix+"/webhooks?saved=1")
		return
	}
	d.renderWebhooks(w, r, s, http.StatusOK, done, cfg.Secret, nil, nil)
}

// delivery serves GET /dashboard/webhooks/deliveries/{id}: the event, attempts, next retry,
// the endpoint's response status and stored body (its first 1,000 characters) and the body
// that was sent.
func (d *Dashboard) delivery(w http.ResponseWriter, r *http.Request, s *session) {
	d.renderDelivery(w, r, s, http.StatusOK, "", nil)
}

func (d *Dashboard) renderDelivery(w http.ResponseWriter, r *http.Request, s *session, status int, notice string,
	errs map[string]string) {
	del, err := d.Webhooks.Delivery(r.Context(), s.Principal, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	if notice == "" && r.URL.Query().Get("retried") == "1" {
		notice = "Delivery attempted now: status " + del.Status + "."
	}
	d.render(w, r, status, "delivery", view{Title: "Delivery " + shortID(del.ID), Nav: "webhooks", Session: s,
		Notice: notice, Errors: errs, Data: del})
}

// retryDelivery serves POST /dashboard/webhooks/deliveries/{id}/retry: an attempt now, whatever
// the schedule, through the API's retry (409 while an attempt is in flight).
func (d *Dashboard) retryDelivery(w http.ResponseWriter, r *http.Request, s *session) {
	entry, err := ports.RetryWebhook(r.Context(), d.Webhooks, r.PathValue("id"))
	if err != nil {
		status, errs, ok := formErrors(err)
		if !ok || status == http.StatusNotFound {
			d.fail(w, r, s, err)
			return
		}
		d.renderDelivery(w, r, s, status, "", errs)
		return
	}
	redirect(w, r, Prefix+"/webhooks/deliveries/"+url.PathEscape(entry.ID)+"?retried=1")
}
