package ports

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/payplat/platform/services/gateway/domain"
)

// webhookErrorResponse maps the errors of the webhook endpoints that errorResponse does not
// know; ok is false for every other error.
func webhookErrorResponse(err error) (status int, body apiError, ok bool) {
	var limited *domain.WebhookRetryLimitedError
	switch {
	case errors.As(err, &limited):
		return http.StatusTooManyRequests, apiError{Code: "RATE_LIMITED", Message: limited.Error()}, true
	case errors.Is(err, domain.ErrWebhookInFlight):
		return http.StatusConflict, apiError{Code: "WEBHOOK_IN_FLIGHT", Message: domain.ErrWebhookInFlight.Error()}, true
	case errors.Is(err, domain.ErrWebhooksUnavailable):
		return http.StatusServiceUnavailable, apiError{Code: "SERVICE_UNAVAILABLE",
			Message: domain.ErrWebhooksUnavailable.Error()}, true
	}
	return 0, apiError{}, false
}

// writeWebhookError writes an error of a webhook endpoint.
func (s *Server) writeWebhookError(w http.ResponseWriter, r *http.Request, err error) {
	status, body, ok := webhookErrorResponse(err)
	if !ok {
		s.writeError(w, r, err)
		return
	}
	if status >= http.StatusInternalServerError {
		s.log.WarnContext(r.Context(), "webhook request failed", "error", err)
	}
	var limited *domain.WebhookRetryLimitedError
	if errors.As(err, &limited) {
		w.Header().Set("Retry-After", strconv.Itoa(limited.RetryAfter))
	}
	body.RequestID = requestID(r.Context())
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{body})
}
