package ports

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/validation"
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

// errorEntry is one row of errorTable: which errors it matches, and what the API answers for
// them. The answer's fields are capitalised as in apiError, so that the sources spell each code
// as `Code: "..."` (TestDocumentListsEveryErrorCode reads them there).
type errorEntry struct {
	// match reports whether err is the entry's (errors.Is or errors.As, through wrapping).
	match  func(err error) bool
	Status int
	Code   string
	// Message and Field are the answer's; messageOf and fieldOf, when set, take them from err.
	Message   string
	Field     string
	messageOf func(err error) string
	fieldOf   func(err error) string
	// area names the endpoints whose dependency raises the error ("merchant", "pool", ...). A 5xx
	// of an area is an outage the client is told to retry, logged at WARN as "<area> request
	// failed"; any other 5xx is a fault whose cause the client is not shown, logged at ERROR as
	// "request failed".
	area string
	// quiet 5xx are not logged here: recoverPanics logged the panic with its stack.
	quiet bool
	// retryAfter, when set, gives the answer's Retry-After header (seconds).
	retryAfter func(err error) string
}

// internalMessage is the message of a 500 INTERNAL: nothing of the cause.
const internalMessage = "internal error; quote the request id when reporting it"

// errorTable maps every error a gateway endpoint returns to its answer (DESIGN §5); the first
// entry that matches wins, and anything none matches is internalError. It serves every handler
// and middleware (writeError) and the dashboard (ErrorResponse).
//
// The areas' own errors come first, in the order merchant, pool, payment, webhook, then those of
// the HTTP layer and of every use case. An area's errors are raised only by its own service and
// use cases, so each endpoint answers exactly as its area's own mapping did. Where areas answer
// alike with different words, each has its own error and so its own entry: 503
// SERVICE_UNAVAILABLE names the merchant service, the pool service, the payments, the webhook
// service or the database (the pool's, the payments' and the database's tell the client to retry
// with the same Idempotency-Key, the others only to retry later); 403 TEST_MODE_ONLY and 429
// RATE_LIMITED say what only test keys may do, and which rate was exceeded.
var errorTable = []errorEntry{
	// Merchant endpoints (SPEC §4.1–4.4).
	{match: is(domain.ErrDuplicateResource), Status: http.StatusBadRequest, Code: "DUPLICATE_RESOURCE",
		messageOf: errorText, Field: "email"},
	{match: is(domain.ErrMerchantStatusLocked), Status: http.StatusForbidden, Code: "MERCHANT_STATUS_LOCKED",
		Message: "the merchant is FROZEN, BLACKLISTED or SUSPENDED; only the platform can change its status"},
	{match: is(domain.ErrWalletProviderUnavailable), Status: http.StatusServiceUnavailable,
		Code: "WALLET_PROVIDER_UNAVAILABLE", Message: "the wallet provider is unavailable; nothing was created, retry later",
		area: "merchant"},
	{match: is(domain.ErrMerchantServiceUnavailable), Status: http.StatusServiceUnavailable, Code: "SERVICE_UNAVAILABLE",
		Message: "the merchant service is unavailable; retry later", area: "merchant"},
	// Pool endpoints (SPEC §4.5, §4.6).
	{match: is(domain.ErrPoolTestModeOnly), Status: http.StatusForbidden, Code: "TEST_MODE_ONLY", messageOf: errorText},
	{match: is(domain.ErrPoolServiceUnavailable), Status: http.StatusServiceUnavailable, Code: "SERVICE_UNAVAILABLE",
		Message: "the pool service is unavailable; retry later with the same Idempotency-Key", area: "pool"},
	// Payment endpoints (SPEC §4.7).
	{match: is(domain.ErrMerchantNotActive), Status: http.StatusForbidden, Code: "MERCHANT_NOT_ACTIVE",
		messageOf: errorText},
	{match: is(domain.ErrPaymentTestModeOnly), Status: http.StatusForbidden, Code: "TEST_MODE_ONLY", messageOf: errorText},
	{match: is(domain.ErrPaymentsUnavailable), Status: http.StatusServiceUnavailable, Code: "SERVICE_UNAVAILABLE",
		Message: "the payment could not be confirmed in time; retry with the same Idempotency-Key", area: "payment"},
	// Webhook endpoints (SPEC 4.8).
	{match: isA[*domain.WebhookRetryLimitedError], Status: http.StatusTooManyRequests, Code: "RATE_LIMITED",
		messageOf: textOf[*domain.WebhookRetryLimitedError], retryAfter: webhookRetryAfter},
	{match: is(domain.ErrWebhookInFlight), Status: http.StatusConflict, Code: "WEBHOOK_IN_FLIGHT",
		Message: domain.ErrWebhookInFlight.Error()},
	{match: is(domain.ErrWebhooksUnavailable), Status: http.StatusServiceUnavailable, Code: "SERVICE_UNAVAILABLE",
		Message: domain.ErrWebhooksUnavailable.Error(), area: "webhook"},
	// Every endpoint: the HTTP layer (routing, authentication, body, idempotency, rate limits)
	// and the use cases' common errors.
	{match: isA[errRateLimited], Status: http.StatusTooManyRequests, Code: "RATE_LIMITED",
		messageOf: textOf[errRateLimited]},
	{match: isA[*validation.Error], Status: http.StatusBadRequest, Code: "VALIDATION_ERROR",
		messageOf: validationMessage, fieldOf: validationField},
	{match: isA[*http.MaxBytesError], Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE",
		Message: "request body exceeds 1 MiB"},
	{match: is(domain.ErrUnauthorized), Status: http.StatusUnauthorized, Code: "UNAUTHORIZED",
		Message: "invalid or missing credentials"},
	{match: is(domain.ErrWrongKeyKind), Status: http.StatusUnauthorized, Code: "UNAUTHORIZED",
		Message: "this endpoint does not accept this kind of API key"},
	{match: is(domain.ErrForbidden), Status: http.StatusForbidden, Code: "FORBIDDEN", Message: "forbidden"},
	{match: is(domain.ErrNotFound), Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "resource not found"},
	{match: is(errRouteNotFound), Status: http.StatusNotFound, Code: "NOT_FOUND", messageOf: errorText},
	{match: is(errMethodNotAllowed), Status: http.StatusMethodNotAllowed, Code: "METHOD_NOT_ALLOWED",
		messageOf: errorText},
	{match: is(errUnsupportedMediaType), Status: http.StatusUnsupportedMediaType, Code: "UNSUPPORTED_MEDIA_TYPE",
		messageOf: errorText},
	{match: is(errIdempotencyKeyReused), Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_REUSED",
		messageOf: errorText},
	{match: is(errIdempotencyKeyInProgress), Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_IN_PROGRESS",
		messageOf: errorText},
	// The database is restarting or failing over: temporary, and nothing was done that a retry
	// with the same Idempotency-Key would not find.
	{match: pg.Unavailable, Status: http.StatusServiceUnavailable, Code: "SERVICE_UNAVAILABLE",
		Message: "the database is unavailable; retry later with the same Idempotency-Key"},
	{match: is(errPanic), Status: http.StatusInternalServerError, Code: "INTERNAL", Message: internalMessage,
		quiet: true},
}

// internalError is the answer to an error no entry of errorTable matches: a 500 whose message
// reveals nothing of the cause.
var internalError = errorEntry{Status: http.StatusInternalServerError, Code: "INTERNAL", Message: internalMessage}

// errorEntryFor returns the first entry of errorTable that matches err, else internalError.
func errorEntryFor(err error) errorEntry {
	for _, e := range errorTable {
		if e.match(err) {
			return e
		}
	}
	return internalError
}

// body returns the error object the entry answers for err, without its request id.
func (e errorEntry) body(err error) apiError {
	b := apiError{Code: e.Code, Message: e.Message, Field: e.Field}
	if e.messageOf != nil {
		b.Message = e.messageOf(err)
	}
	if e.fieldOf != nil {
		b.Field = e.fieldOf(err)
	}
	return b
}

// writeError writes err as an error response, the one error writer of every handler and
// middleware. A 5xx is logged with the request's context (request id, company), since its cause
// is not shown to the client: at WARN for an area's unavailable dependency, at ERROR otherwise.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorEntryFor(err)
	switch {
	case e.Status < http.StatusInternalServerError || e.quiet:
	case e.area != "":
		s.log.WarnContext(r.Context(), e.area+" request failed", "error", err)
	default:
		s.log.ErrorContext(r.Context(), "request failed", "error", err)
	}
	if e.retryAfter != nil {
		w.Header().Set("Retry-After", e.retryAfter(err))
	}
	body := e.body(err)
	body.RequestID = requestID(r.Context())
	writeJSON(w, e.Status, struct {
		Error apiError `json:"error"`
	}{body})
}

// is matches the errors that wrap target.
func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// isA matches the errors that wrap an error of type T.
func isA[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// textOf is the text of the error of type T that err wraps.
func textOf[T error](err error) string {
	var target T
	errors.As(err, &target)
	return target.Error()
}

// errorText is the text of err itself, with whatever wraps it.
func errorText(err error) string { return err.Error() }

func validationMessage(err error) string {
	var v *validation.Error
	errors.As(err, &v)
	return v.Message
}

func validationField(err error) string {
	var v *validation.Error
	errors.As(err, &v)
	return v.Field
}

// webhookRetryAfter is the Retry-After of a refused manual webhook retry.
func webhookRetryAfter(err error) string {
	var limited *domain.WebhookRetryLimitedError
	errors.As(err, &limited)
	return strconv.Itoa(limited.RetryAfter)
}
