package ports

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/logx"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/gateway/domain"
)

// What the dashboard (package dashboard, issue 18) shares with the API: the use cases behind
// the API's handlers, taking parsed input and the principal in ctx, so that a form in the
// dashboard and a request to the API are validated, refused and de-duplicated alike. The
// handlers of the API call the same functions.

// Mount serves every request under prefix with h, behind the server's request ids, access log,
// metrics, panic recovery and body limit.
func (s *Server) Mount(prefix string, h http.Handler) {
	s.router.PathPrefix(prefix).Handler(h)
}

// Idempotent makes h honour an Idempotency-Key header exactly as the API's POST routes do,
// scoped by the caller that WithPrincipal put in the request's context.
func (s *Server) Idempotent(h http.Handler) http.Handler { return s.idempotent(h) }

// WithPrincipal returns ctx for a request made by p (as an API key's would be): PrincipalFrom
// finds p, Idempotency-Keys are scoped to p's company and environment, and logs and metrics
// carry the company.
func WithPrincipal(ctx context.Context, p domain.Principal) context.Context {
	company := p.CompanyID.String()
	infoFrom(ctx).company = company
	ctx = context.WithValue(ctx, principalKey{}, p)
	ctx = context.WithValue(ctx, scopeKey{}, companyScope(p))
	return logx.WithCompany(ctx, company)
}

// companyScope is the Idempotency-Key scope of a company's key in one environment.
func companyScope(p domain.Principal) string {
	return "company:" + p.CompanyID.String() + ":" + string(p.Environment)
}

// RequestID returns the id of the request that ctx belongs to.
func RequestID(ctx context.Context) string { return requestID(ctx) }

// ErrorResponse returns what the API answers for err: the HTTP status, the error code, the
// message and the field it concerns (DESIGN §5), from the table every handler's answers come
// from (errorTable). Unknown errors are 500 INTERNAL with a message that reveals nothing.
func ErrorResponse(err error) (status int, code, message, field string) {
	e := errorEntryFor(err)
	b := e.body(err)
	return e.Status, b.Code, b.Message, b.Field
}

// CreateMerchant creates a merchant for the principal in ctx. Under an Idempotency-Key the
// merchant id derives from the caller and the key, so a retry after a 5xx (which the
// idempotency layer does not store) cannot create a second merchant.
func CreateMerchant(ctx context.Context, svc MerchantService, name, email, idempotencyKey string) (domain.MerchantCreated, error) {
	p, _ := PrincipalFrom(ctx)
	merchantID := ""
	if idempotencyKey != "" {
		merchantID = uuid.NewSHA1(merchantIDSpace, []byte(callerScope(ctx)+"\x00"+idempotencyKey)).String()
	}
	return svc.Create(ctx, p, requestID(ctx), merchantID, name, email)
}

// SetMerchantStatus changes a merchant's status for the company of p, or for the platform when
// p is nil; status is required.
func SetMerchantStatus(ctx context.Context, svc MerchantService, p *domain.Principal, merchantID string,
	status *string, reason string) (domain.MerchantStatusResult, error) {
	if status == nil || *status == "" {
		return domain.MerchantStatusResult{}, domain.Invalid("status", "is required")
	}
	return svc.SetStatus(ctx, p, requestID(ctx), merchantID, *status, reason)
}

// UpdatePoolSettings changes the given settings of the pool of the principal in ctx; at least
// one must be given, and the threshold is a USDC amount of 0 or more.
func UpdatePoolSettings(ctx context.Context, svc PoolService, lowThreshold *string, autoTopUp *bool) (domain.PoolBalance, error) {
	if lowThreshold == nil && autoTopUp == nil {
		return domain.PoolBalance{}, domain.Invalid("", "give low_threshold, auto_top_up_enabled or both")
	}
	u := domain.PoolSettingsUpdate{AutoTopUpEnabled: autoTopUp}
	if lowThreshold != nil {
		a, err := money.Parse(*lowThreshold)
		if err != nil {
			return domain.PoolBalance{}, domain.Invalid("low_threshold",
				`must be a USDC amount of 0 or more with at most 6 decimals, as a string ("100.00")`)
		}
		u.LowThreshold = &a
	}
	p, _ := PrincipalFrom(ctx)
	return svc.UpdateSettings(ctx, p.CompanyID, p.Environment, u, requestID(ctx))
}

// SimulatePoolDeposit records a simulated deposit into the pool of the principal in ctx (test
// keys only). Under an Idempotency-Key the pool de-duplicates on a hash of caller and key; without
// one, every call is a deposit.
func SimulatePoolDeposit(ctx context.Context, svc PoolService, amount *string, idempotencyKey string) (domain.PoolDeposit, error) {
	p, _ := PrincipalFrom(ctx)
	if p.Environment != domain.Test {
		return domain.PoolDeposit{}, domain.ErrPoolTestModeOnly
	}
	if amount == nil {
		return domain.PoolDeposit{}, domain.Invalid("amount", "is required")
	}
	if a, err := money.Parse(*amount); err != nil || !a.IsPositive() {
		return domain.PoolDeposit{}, domain.Invalid("amount",
			`must be a USDC amount greater than 0 with at most 6 decimals, as a string ("100.00")`)
	}
	return svc.SimulateDeposit(ctx, p.CompanyID, p.Environment, *amount, commandIDFor(ctx, idempotencyKey),
		requestID(ctx))
}

// SimulatePayment fires a simulated payment (created, processing, confirmed) for the
// principal's merchant (test keys only), as POST /api/v1/dashboard/payments/simulate does;
// path is the route it was asked on, which keeps the payment ids of two routes' keys apart.
func SimulatePayment(ctx context.Context, svc PaymentService, path, merchantID string, amount *string,
	idempotencyKey string) (domain.Payment, error) {
	if p, _ := PrincipalFrom(ctx); p.Environment != domain.Test {
		return domain.Payment{}, domain.ErrPaymentTestModeOnly
	}
	return createPayment(ctx, svc.Simulate, path, paymentRequestJSON{MerchantID: &merchantID, Amount: amount},
		idempotencyKey)
}

// RetryWebhook attempts one of the principal's deliveries now; a malformed id is 404 like
// another company's.
func RetryWebhook(ctx context.Context, svc WebhookService, logID string) (domain.WebhookLogEntry, error) {
	id, err := uuid.Parse(logID)
	if err != nil {
		return domain.WebhookLogEntry{}, domain.ErrNotFound
	}
	p, _ := PrincipalFrom(ctx)
	return svc.Retry(ctx, p, id)
}
