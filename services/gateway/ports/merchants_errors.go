package ports

import (
	"errors"
	"net/http"

	"github.com/payplat/platform/services/gateway/domain"
)

// merchantErrorResponse maps the errors of the merchant endpoints that errorResponse does not
// know (DESIGN §5); ok is false for every other error.
func merchantErrorResponse(err error) (status int, body apiError, ok bool) {
	switch {
	case errors.Is(err, domain.ErrDuplicateResource):
		return http.StatusBadRequest, apiError{Code: "DUPLICATE_RESOURCE", Message: err.Error(), Field: "email"}, true
	case errors.Is(err, domain.ErrMerchantStatusLocked):
		return http.StatusForbidden, apiError{Code: "MERCHANT_STATUS_LOCKED",
			Message: "the merchant is FROZEN, BLACKLISTED or SUSPENDED; only the platform can change its status"}, true
	case errors.Is(err, domain.ErrWalletProviderUnavailable):
		return http.StatusServiceUnavailable, apiError{Code: "WALLET_PROVIDER_UNAVAILABLE",
			Message: "the wallet provider is unavailable; nothing was created, retry later"}, true
	case errors.Is(err, domain.ErrMerchantServiceUnavailable):
		return http.StatusServiceUnavailable, apiError{Code: "SERVICE_UNAVAILABLE",
			Message: "the merchant service is unavailable; retry later"}, true
	}
	return 0, apiError{}, false
}

// writeMerchantError writes an error of a merchant endpoint.
func (s *Server) writeMerchantError(w http.ResponseWriter, r *http.Request, err error) {
	status, body, ok := merchantErrorResponse(err)
	if !ok {
		s.writeError(w, r, err)
		return
	}
	if status >= http.StatusInternalServerError {
		s.log.WarnContext(r.Context(), "merchant request failed", "error", err)
	}
	body.RequestID = requestID(r.Context())
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{body})
}
