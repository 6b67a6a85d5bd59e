package ports

import (
	"errors"
	"net/http"

	"github.com/payplat/platform/services/gateway/domain"
)

// paymentErrorResponse maps the errors of the payment endpoints that errorResponse does not
// know (DESIGN §5); ok is false for every other error.
func paymentErrorResponse(err error) (status int, body apiError, ok bool) {
	switch {
	case errors.Is(err, domain.ErrMerchantNotActive):
		return http.StatusForbidden, apiError{Code: "MERCHANT_NOT_ACTIVE", Message: err.Error()}, true
	case errors.Is(err, domain.ErrPaymentTestModeOnly):
		return http.StatusForbidden, apiError{Code: "TEST_MODE_ONLY", Message: err.Error()}, true
	case errors.Is(err, domain.ErrPaymentsUnavailable):
		return http.StatusServiceUnavailable, apiError{Code: "SERVICE_UNAVAILABLE",
			Message: "the payment could not be confirmed in time; retry with the same Idempotency-Key"}, true
	}
	return 0, apiError{}, false
}

// writePaymentError writes an error of a payment endpoint.
func (s *Server) writePaymentError(w http.ResponseWriter, r *http.Request, err error) {
	status, body, ok := paymentErrorResponse(err)
	if !ok {
		s.writeError(w, r, err)
		return
	}
	if status >= http.StatusInternalServerError {
		s.log.WarnContext(r.Context(), "payment request failed", "error", err)
	}
	body.RequestID = requestID(r.Context())
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{body})
}
