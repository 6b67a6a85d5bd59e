package ports

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/gateway/domain"
)

// PaymentService is what the payment endpoints need: reads from the payments read table,
// writes as events on the bus that return once the read table shows them.
type PaymentService interface {
	List(ctx context.Context, p domain.Principal, f domain.PaymentFilter) ([]domain.Payment, bool, error)
	// Process and Simulate publish a payment for the caller's merchant when it is ACTIVE
	// (domain.ErrNotFound, domain.ErrMerchantNotActive otherwise; checked first, atomically
	// with the publish), after request has validated the rest of the request.
	Process(ctx context.Context, p domain.Principal, requestID, merchantID string, request func() (domain.PaymentRequest, error)) (domain.Payment, error)
	Simulate(ctx context.Context, p domain.Principal, requestID, merchantID string, request func() (domain.PaymentRequest, error)) (domain.Payment, error)
}

// Payments list page sizes (SPEC §4.7, §8).
const (
	defaultPaymentsLimit = 50
	maxPaymentsLimit     = 100
)

// paymentRoutes registers the payment endpoints (SPEC §4.7, DESIGN §5); a nil service leaves
// them out.
func (s *Server) paymentRoutes() {
	if s.payments == nil {
		return
	}
	s.HandleFunc(http.MethodGet, "/api/v1/management/payments", s.listPayments, RequireKey(domain.Secret),
		"limit", "offset", "status")
	s.HandleFunc(http.MethodPost, "/api/v1/payments/process", s.processPayment,
		RequireKey(domain.Secret, domain.Publishable))
	s.HandleFunc(http.MethodPost, "/api/v1/dashboard/payments/simulate", s.simulatePayment, RequireKey(domain.Secret))
}

// paymentTime renders an ISO 8601 time in UTC with millisecond precision.
func paymentTime(t time.Time) string { return events.FormatTime(t) }

type paymentMerchantJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type paymentJSON struct {
	PaymentID   string              `json:"payment_id"`
	Status      string              `json:"status"`
	Amount      string              `json:"amount"`
	Currency    string              `json:"currency"`
	Merchant    paymentMerchantJSON `json:"merchant"`
	TxHash      *string             `json:"tx_hash"`
	CreatedAt   string              `json:"created_at"`
	ExpiresAt   *string             `json:"expires_at"`
	ConfirmedAt *string             `json:"confirmed_at"`
}

// newPaymentJSON renders SPEC §2.7. tx_hash is null while the payment is PENDING (also while it
// is being processed on-chain), confirmed_at null unless confirmed.
func newPaymentJSON(p domain.Payment) paymentJSON {
	out := paymentJSON{PaymentID: p.ID, Status: p.Status, Amount: p.Amount, Currency: p.Currency,
		Merchant: paymentMerchantJSON{ID: p.MerchantID, Name: p.MerchantName}, CreatedAt: paymentTime(p.CreatedAt),
		ExpiresAt: optionalTimestamp(p.ExpiresAt)}
	if p.Status != domain.PaymentPending && p.TxHash != "" {
		out.TxHash = &p.TxHash
	}
	if p.Status == domain.PaymentConfirmed {
		out.ConfirmedAt = optionalTimestamp(p.ConfirmedAt)
	}
	return out
}

func optionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := paymentTime(*t)
	return &s
}

// listPayments serves GET /api/v1/management/payments: the company's payments in the key's
// environment, newest first.
func (s *Server) listPayments(w http.ResponseWriter, r *http.Request) {
	f, err := paymentFilter(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, _ := PrincipalFrom(r.Context())
	list, more, err := s.payments.List(r.Context(), p, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]paymentJSON, len(list))
	for i, pm := range list {
		out[i] = newPaymentJSON(pm)
	}
	type pagination struct {
		Limit   int  `json:"limit"`
		HasMore bool `json:"has_more"`
	}
	writeJSON(w, http.StatusOK, struct {
		Payments   []paymentJSON `json:"payments"`
		Pagination pagination    `json:"pagination"`
	}{out, pagination{f.Limit, more}})
}

// paymentFilter reads limit (1–100, default 50), offset (≥ 0, default 0) and status (PENDING,
// CONFIRMED, FAILED); a bad value is 400 VALIDATION_ERROR. The route takes no other parameter,
// and none twice (strictQuery).
func paymentFilter(r *http.Request) (domain.PaymentFilter, error) {
	f := domain.PaymentFilter{Limit: defaultPaymentsLimit}
	q := r.URL.Query()
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxPaymentsLimit {
			return f, domain.Invalid("limit", "must be a whole number from 1 to 100")
		}
		f.Limit = n
	}
	if q.Has("offset") {
		n, err := strconv.Atoi(q.Get("offset"))
		if err != nil || n < 0 {
			return f, domain.Invalid("offset", "must be a whole number of at least 0")
		}
		f.Offset = n
	}
	if q.Has("status") {
		v := q.Get("status")
		if v != domain.PaymentPending && v != domain.PaymentConfirmed && v != domain.PaymentFailed {
			return f, domain.Invalid("status", "must be PENDING, CONFIRMED or FAILED")
		}
		f.Status = v
	}
	return f, nil
}

type paymentRequestJSON struct {
	MerchantID       *string `json:"merchant_id"`
	Amount           *string `json:"amount"`
	ExpiresInSeconds *int64  `json:"expires_in_seconds"`
}

// processPayment serves POST /api/v1/payments/process (SDK; secret or publishable key).
func (s *Server) processPayment(w http.ResponseWriter, r *http.Request) {
	s.servePaymentCreation(w, r, s.payments.Process)
}

// simulatePayment serves POST /api/v1/dashboard/payments/simulate (secret test keys only).
func (s *Server) simulatePayment(w http.ResponseWriter, r *http.Request) {
	if p, _ := PrincipalFrom(r.Context()); p.Environment != domain.Test {
		s.writeError(w, r, domain.ErrPaymentTestModeOnly)
		return
	}
	s.servePaymentCreation(w, r, s.payments.Simulate)
}

type paymentCreator func(ctx context.Context, p domain.Principal, requestID, merchantID string,
	request func() (domain.PaymentRequest, error)) (domain.Payment, error)

// servePaymentCreation checks the merchant first (404, 403 MERCHANT_NOT_ACTIVE; SPEC §3.1: every
// payment call checks the merchant status first), then the amount and expiry, then publishes.
// Under an Idempotency-Key the payment id derives from the caller and the key, so a retry
// after a 5xx (which the idempotency layer does not store) is the same payment.
func (s *Server) servePaymentCreation(w http.ResponseWriter, r *http.Request, create paymentCreator) {
	var body paymentRequestJSON
	if err := decodeJSON(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	pm, err := createPayment(r.Context(), create, r.URL.Path, body, r.Header.Get("Idempotency-Key"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		Payment paymentJSON `json:"payment"`
	}{newPaymentJSON(pm)})
}

// createPayment validates body and creates the payment with create for the principal in ctx;
// path is the route asked, which with the Idempotency-Key derives the payment id.
func createPayment(ctx context.Context, create paymentCreator, path string, body paymentRequestJSON,
	idempotencyKey string) (domain.Payment, error) {
	if body.MerchantID == nil || *body.MerchantID == "" {
		return domain.Payment{}, domain.Invalid("merchant_id", "is required")
	}
	p, _ := PrincipalFrom(ctx)
	return create(ctx, p, requestID(ctx), *body.MerchantID, func() (domain.PaymentRequest, error) {
		req, err := paymentRequest(body)
		if err != nil {
			return req, err
		}
		if idempotencyKey != "" {
			req.PaymentID = uuid.NewSHA1(paymentIDSpace, []byte(callerScope(ctx)+"\x00"+path+"\x00"+idempotencyKey)).String()
		}
		return req, nil
	})
}

// paymentIDSpace is the UUIDv5 namespace of payment ids derived from Idempotency-Keys.
var paymentIDSpace = uuid.MustParse("b7e4a0d2-6c1f-5e3a-8d9b-2f4c6a8e0b1d")

func paymentRequest(body paymentRequestJSON) (domain.PaymentRequest, error) {
	req := domain.PaymentRequest{MerchantID: *body.MerchantID, ExpiresIn: domain.PaymentDefaultExpiry}
	if body.Amount == nil {
		return req, domain.Invalid("amount", "is required")
	}
	a, err := money.Parse(*body.Amount)
	if err != nil || !a.IsPositive() {
		return req, domain.Invalid("amount", "must be a positive USDC amount with at most 6 decimals, for example \"12.50\"")
	}
	req.Amount = a.String()
	if body.ExpiresInSeconds != nil {
		n := time.Duration(*body.ExpiresInSeconds) * time.Second
		if *body.ExpiresInSeconds < 60 || *body.ExpiresInSeconds > 86400 {
			return req, domain.Invalid("expires_in_seconds", "must be a whole number from 60 to 86400")
		}
		req.ExpiresIn = n
	}
	return req, nil
}
