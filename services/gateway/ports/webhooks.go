package ports

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
	"github.com/payplat/platform/services/gateway/domain"
)

// Page size of the delivery log (SPEC 4.8, 8).
const (
	defaultWebhookLogLimit = 50
	maxWebhookLogLimit     = 100
)

// webhookRoutes registers the webhook endpoints (SPEC 4.8, DESIGN §5).
func (s *Server) webhookRoutes() {
	secret := RequireKey(domain.Secret)
	s.HandleFunc(http.MethodGet, "/api/v1/dashboard/webhooks/logs", s.webhookLogs, secret, "status", "event_type", "limit")
	s.HandleFunc(http.MethodPost, "/api/v1/dashboard/webhooks/config", s.configureWebhooks, secret)
	s.HandleFunc(http.MethodPost, "/api/v1/dashboard/webhooks/{log_id}/retry", s.retryWebhook, secret)
	s.HandleFunc(http.MethodGet, "/api/v1/cron/webhooks/retry", s.runWebhookCron, CronSecret)
}

// webhookLogs serves GET /api/v1/dashboard/webhooks/logs?status=&event_type=&limit=.
func (s *Server) webhookLogs(w http.ResponseWriter, r *http.Request) error {
	f, err := webhookLogFilter(r)
	if err != nil {
		return err
	}
	p, _ := PrincipalFrom(r.Context())
	logs, err := s.app.Queries.WebhookLogs.Handle(r.Context(), query.WebhookLogs{Principal: p, Filter: f})
	if err != nil {
		return err
	}
	if logs == nil {
		logs = []domain.WebhookLogEntry{}
	}
	writeJSON(w, http.StatusOK, struct {
		Logs []domain.WebhookLogEntry `json:"logs"`
	}{logs})
	return nil
}

// webhookLogFilter reads status, event_type and limit (1 to 100, default 50); the route takes no
// other parameter (strictQuery).
func webhookLogFilter(r *http.Request) (domain.WebhookLogFilter, error) {
	q := r.URL.Query()
	f := domain.WebhookLogFilter{Status: q.Get("status"), EventType: q.Get("event_type"), Limit: defaultWebhookLogLimit}
	if q.Has("status") && !slices.Contains(domain.WebhookStatuses, f.Status) {
		return f, validation.Invalid("status", "must be SUCCESS, FAILED or PENDING")
	}
	if q.Has("event_type") {
		if spec, ok := events.Lookup(f.EventType); !ok || !spec.Catalogue {
			return f, validation.Invalid("event_type", "must be a webhook event type such as payment.confirmed")
		}
	}
	var err error
	f.Limit, err = pageLimit(q, defaultWebhookLogLimit, maxWebhookLogLimit)
	if err != nil {
		return f, err
	}
	return f, nil
}

type webhookConfigRequest struct {
	URL        *string `json:"url"`
	Enabled    *bool   `json:"enabled"`
	RollSecret *bool   `json:"rollSecret"`
}

// configureWebhooks serves POST /api/v1/dashboard/webhooks/config: body url (https), enabled,
// rollSecret. The answer carries the signing secret in plain text only when it was just
// created (rollSecret true, or the first configuration); it is never shown again.
func (s *Server) configureWebhooks(w http.ResponseWriter, r *http.Request) error {
	var req webhookConfigRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	p, _ := PrincipalFrom(r.Context())
	cfg, err := s.app.Commands.ConfigureWebhooks.Handle(r.Context(), command.ConfigureWebhooks{Principal: p,
		Change: domain.WebhookConfigChange{URL: req.URL, Enabled: req.Enabled,
			RollSecret: req.RollSecret != nil && *req.RollSecret}})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, cfg)
	return nil
}

// retryWebhook serves POST /api/v1/dashboard/webhooks/{log_id}/retry: an attempt now, whatever
// the schedule, answered with the updated log entry. Another company's (or environment's) id,
// and a malformed one, are 404.
func (s *Server) retryWebhook(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	entry, err := s.app.Commands.RetryWebhook.Handle(r.Context(), command.RetryWebhook{Principal: p,
		LogID: mux.Vars(r)["log_id"]})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entry)
	return nil
}

// runWebhookCron serves GET /api/v1/cron/webhooks/retry: one run of the due retries (at most 20).
func (s *Server) runWebhookCron(w http.ResponseWriter, r *http.Request) error {
	res, err := s.app.Commands.RunWebhookCron.Handle(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
		domain.WebhookCronResult
	}{fmt.Sprintf("processed %d webhook retries: %d successful, %d failed", res.TotalProcessed, res.Successful,
		res.Failed), res})
	return nil
}
