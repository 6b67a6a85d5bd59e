package ports

import (
	"errors"
	"net/http"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/gateway/domain"
)

// Errors raised by the HTTP layer itself. Use cases raise the errors of package domain.
var (
	errRouteNotFound        = errors.New("no such route")
	errMethodNotAllowed     = errors.New("method not allowed on this route")
	errUnsupportedMediaType = errors.New("request body must be JSON: send the header Content-Type: application/json " +
		"(curl -d sends application/x-www-form-urlencoded unless given -H 'Content-Type: application/json')")
	errIdempotencyKeyReused     = errors.New("this Idempotency-Key was already used with a different request")
	errIdempotencyKeyInProgress = errors.New("a request with this Idempotency-Key is still being processed")
	errPanic                    = errors.New("panic while serving request")
)

// apiError is the error object of every error response (DESIGN §5).
type apiError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id"`
}

// errorResponse is the one place that maps errors to an HTTP status and error code. Anything it
// does not know is a 500 INTERNAL whose message reveals nothing of the cause.
func errorResponse(err error) (int, apiError) {
	var (
		validation *domain.ValidationError
		tooLarge   *http.MaxBytesError
		limited    errRateLimited
	)
	switch {
	case errors.As(err, &limited):
		return http.StatusTooManyRequests, apiError{Code: "RATE_LIMITED", Message: limited.Error()}
	case errors.As(err, &validation):
		return http.StatusBadRequest, apiError{Code: "VALIDATION_ERROR", Message: validation.Message,
			Field: validation.Field}
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, apiError{Code: "PAYLOAD_TOO_LARGE",
			Message: "request body exceeds 1 MiB"}
	case errors.Is(err, domain.ErrUnauthorized):
		return http.StatusUnauthorized, apiError{Code: "UNAUTHORIZED",
			Message: "invalid or missing credentials"}
	case errors.Is(err, domain.ErrWrongKeyKind):
		return http.StatusUnauthorized, apiError{Code: "UNAUTHORIZED",
			Message: "this endpoint does not accept this kind of API key"}
	case errors.Is(err, domain.ErrForbidden):
		return http.StatusForbidden, apiError{Code: "FORBIDDEN", Message: "forbidden"}
	case errors.Is(err, domain.ErrNotFound):
		return http.StatusNotFound, apiError{Code: "NOT_FOUND", Message: "resource not found"}
	case errors.Is(err, errRouteNotFound):
		return http.StatusNotFound, apiError{Code: "NOT_FOUND", Message: err.Error()}
	case errors.Is(err, errMethodNotAllowed):
		return http.StatusMethodNotAllowed, apiError{Code: "METHOD_NOT_ALLOWED", Message: err.Error()}
	case errors.Is(err, errUnsupportedMediaType):
		return http.StatusUnsupportedMediaType, apiError{Code: "UNSUPPORTED_MEDIA_TYPE",
			Message: err.Error()}
	case errors.Is(err, errIdempotencyKeyReused):
		return http.StatusConflict, apiError{Code: "IDEMPOTENCY_KEY_REUSED", Message: err.Error()}
	case errors.Is(err, errIdempotencyKeyInProgress):
		return http.StatusConflict, apiError{Code: "IDEMPOTENCY_KEY_IN_PROGRESS", Message: err.Error()}
	case pg.Unavailable(err):
		// The database is restarting or failing over: temporary, and nothing was done that a
		// retry with the same Idempotency-Key would not find.
		return http.StatusServiceUnavailable, apiError{Code: "SERVICE_UNAVAILABLE",
			Message: "the database is unavailable; retry later with the same Idempotency-Key"}
	default:
		return http.StatusInternalServerError, apiError{Code: "INTERNAL",
			Message: "internal error; quote the request id when reporting it"}
	}
}

// writeError writes err as an error response. Internal errors are logged with the request's
// context (request id, company), since their cause is not shown to the client.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorResponse(err)
	if status >= http.StatusInternalServerError && !errors.Is(err, errPanic) {
		s.log.ErrorContext(r.Context(), "request failed", "error", err)
	}
	body.RequestID = requestID(r.Context())
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{body})
}
