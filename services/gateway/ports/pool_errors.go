package ports

import (
	"errors"
	"net/http"

	"github.com/payplat/platform/services/gateway/domain"
)

// poolErrorResponse maps the errors of the pool endpoints that errorResponse does not know
// (DESIGN §5); ok is false for every other error.
func poolErrorResponse(err error) (status int, body apiError, ok bool) {
	switch {
	case errors.Is(err, domain.ErrPoolTestModeOnly):
		return http.StatusForbidden, apiError{Code: "TEST_MODE_ONLY", Message: err.Error()}, true
	case errors.Is(err, domain.ErrPoolServiceUnavailable):
		return http.StatusServiceUnavailable, apiError{Code: "SERVICE_UNAVAILABLE",
			Message: "the pool service is unavailable; retry later with the same Idempotency-Key"}, true
	}
	return 0, apiError{}, false
}

// writeError writes an error of a pool endpoint.
func (h poolHandlers) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body, ok := poolErrorResponse(err)
	if !ok {
		h.s.writeError(w, r, err)
		return
	}
	if status >= http.StatusInternalServerError {
		h.s.log.WarnContext(r.Context(), "pool request failed", "error", err)
	}
	body.RequestID = requestID(r.Context())
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{body})
}
