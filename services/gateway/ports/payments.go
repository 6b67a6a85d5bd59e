package ports

import (
	"context"
	"net/http"
	"time"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
	"github.com/payplat/platform/services/gateway/domain"
)

// Payments list page sizes (SPEC §4.7, §8).
const (
	defaultPaymentsLimit = 50
	maxPaymentsLimit     = 100
)

// paymentRoutes registers the payment endpoints (SPEC §4.7, DESIGN §5).
func (s *Server) paymentRoutes() {
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
func (s *Server) listPayments(w http.ResponseWriter, r *http.Request) error {
	f, err := paymentFilter(r)
	if err != nil {
		return err
	}
	p, _ := PrincipalFrom(r.Context())
	list, more, err := s.app.Queries.ListPayments.Handle(r.Context(), query.ListPayments{Principal: p, Filter: f})
	if err != nil {
		return err
	}
	out := jsonList(list, newPaymentJSON)
	type pagination struct {
		Limit   int  `json:"limit"`
		HasMore bool `json:"has_more"`
	}
	writeJSON(w, http.StatusOK, struct {
		Payments   []paymentJSON `json:"payments"`
		Pagination pagination    `json:"pagination"`
	}{out, pagination{f.Limit, more}})
	return nil
}

// paymentFilter reads limit (1–100, default 50), offset (≥ 0, default 0) and status (PENDING,
// CONFIRMED, FAILED); a bad value is 400 VALIDATION_ERROR. The route takes no other parameter,
// and none twice (strictQuery).
func paymentFilter(r *http.Request) (domain.PaymentFilter, error) {
	q := r.URL.Query()
	var f domain.PaymentFilter
	var err error
	if f.Limit, err = pageLimit(q, defaultPaymentsLimit, maxPaymentsLimit); err != nil {
		return f, err
	}
	if f.Offset, err = pageOffset(q); err != nil {
		return f, err
	}
	if q.Has("status") {
		v := q.Get("status")
		if v != domain.PaymentPending && v != domain.PaymentConfirmed && v != domain.PaymentFailed {
			return f, validation.Invalid("status", "must be PENDING, CONFIRMED or FAILED")
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
func (s *Server) processPayment(w http.ResponseWriter, r *http.Request) error {
	return s.servePaymentCreation(w, r, func(ctx context.Context, np command.NewPayment) (domain.Payment, error) {
		return s.app.Commands.ProcessPayment.Handle(ctx, command.ProcessPayment{NewPayment: np})
	})
}

// simulatePayment serves POST /api/v1/dashboard/payments/simulate (secret test keys only).
func (s *Server) simulatePayment(w http.ResponseWriter, r *http.Request) error {
	p, _ := PrincipalFrom(r.Context())
	if err := s.app.Commands.SimulatePayment.Permit(p); err != nil {
		return err
	}
	return s.servePaymentCreation(w, r, func(ctx context.Context, np command.NewPayment) (domain.Payment, error) {
		return s.app.Commands.SimulatePayment.Handle(ctx, command.SimulatePayment{NewPayment: np})
	})
}

// servePaymentCreation decodes the payment and has create create it (the merchant checked first,
// then the amount and expiry; a retry under the same Idempotency-Key is the same payment), then
// answers 201 with it.
func (s *Server) servePaymentCreation(w http.ResponseWriter, r *http.Request,
	create func(context.Context, command.NewPayment) (domain.Payment, error)) error {
	var body paymentRequestJSON
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	pm, err := create(r.Context(), newPayment(r.Context(), r.URL.Path, body, r.Header.Get("Idempotency-Key")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		Payment paymentJSON `json:"payment"`
	}{newPaymentJSON(pm)})
	return nil
}

// newPayment is the payment body asks of the caller in ctx; path is the route asked, which with
// the Idempotency-Key derives the payment id. A missing merchant_id is empty.
func newPayment(ctx context.Context, path string, body paymentRequestJSON, idempotencyKey string) command.NewPayment {
	p, _ := PrincipalFrom(ctx)
	return command.NewPayment{Principal: p, RequestID: requestID(ctx), MerchantID: valueOf(body.MerchantID),
		Amount: body.Amount, ExpiresInSeconds: body.ExpiresInSeconds, Route: path, Caller: callerScope(ctx),
		IdempotencyKey: idempotencyKey}
}
