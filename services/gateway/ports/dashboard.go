package ports

import (
	"context"
	"net/http"

	"github.com/payplat/platform/pkg/logx"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/app/query"
	"github.com/payplat/platform/services/gateway/domain"
)

// What the dashboard (package dashboard, issue 18) shares with the API: the use cases behind
// the API's handlers (app/command), taking parsed input and the principal in ctx and built into
// their commands as the API's handlers build them, so that a form in the dashboard and a
// request to the API are validated, refused and de-duplicated alike.

// MerchantService is everything the merchant use cases need, as one adapter serves it
// (adapters.Merchants); the dashboard takes one to call them and to read.
type MerchantService interface {
	query.MerchantLister
	query.MerchantLedgerReader
	command.MerchantCreator
	command.MerchantStatusSetter
}

// PoolService is everything the pool use cases need, as one adapter serves it (adapters.Pool);
// the dashboard takes one to call them and to read.
type PoolService interface {
	query.PoolBalanceReader
	query.PoolTransactionReader
	command.PoolSettingsUpdater
	command.PoolDepositSimulator
}

// PaymentService is everything the payment use cases need, as one adapter serves it
// (adapters.Payments); the dashboard takes one to call them and to read.
type PaymentService interface {
	query.PaymentLister
	command.PaymentWriter
}

// WebhookService is everything the webhook use cases need, as one adapter serves it
// (adapters.Webhooks); the dashboard takes one to call them and to read.
type WebhookService interface {
	query.WebhookLogReader
	command.WebhookConfigurer
	command.WebhookRetrier
	command.WebhookCronRunner
}

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

// CreateMerchant creates a merchant for the principal in ctx (command.CreateMerchant). Under an
// Idempotency-Key the merchant id derives from the caller and the key, so a retry after a 5xx
// (which the idempotency layer does not store) cannot create a second merchant.
func CreateMerchant(ctx context.Context, svc command.MerchantCreator, name, email, idempotencyKey string) (domain.MerchantCreated, error) {
	return command.NewCreateMerchantHandler(svc).Handle(ctx, createMerchantCommand(ctx, name, email, idempotencyKey))
}

// SetMerchantStatus changes a merchant's status for the company of p (command.SetMerchantStatus),
// or for the platform when p is nil (command.AdminSetMerchantStatus); status is required.
func SetMerchantStatus(ctx context.Context, svc command.MerchantStatusSetter, p *domain.Principal, merchantID string,
	status *string, reason string) (domain.MerchantStatusResult, error) {
	return changeStatus(ctx, command.NewSetMerchantStatusHandler(svc), command.NewAdminSetMerchantStatusHandler(svc), p,
		merchantID, status, reason)
}

// UpdatePoolSettings changes the given settings of the pool of the principal in ctx
// (command.UpdatePoolSettings); at least one must be given, and the threshold is a USDC amount
// of 0 or more.
func UpdatePoolSettings(ctx context.Context, svc command.PoolSettingsUpdater, lowThreshold *string,
	autoTopUp *bool) (domain.PoolBalance, error) {
	return command.NewUpdatePoolSettingsHandler(svc).Handle(ctx, updatePoolSettingsCommand(ctx, lowThreshold, autoTopUp))
}

// SimulatePoolDeposit records a simulated deposit into the pool of the principal in ctx (test
// keys only; command.SimulatePoolDeposit). Under an Idempotency-Key the pool de-duplicates on a
// hash of caller and key; without one, every call is a deposit.
func SimulatePoolDeposit(ctx context.Context, svc command.PoolDepositSimulator, amount *string,
	idempotencyKey string) (domain.PoolDeposit, error) {
	return command.NewSimulatePoolDepositHandler(svc).Handle(ctx, simulatePoolDepositCommand(ctx, amount, idempotencyKey))
}

// SimulatePayment fires a simulated payment (created, processing, confirmed) for the
// principal's merchant (test keys only; command.SimulatePayment), as POST
// /api/v1/dashboard/payments/simulate does; path is the route it was asked on, which keeps the
// payment ids of two routes' keys apart.
func SimulatePayment(ctx context.Context, svc command.PaymentWriter, path, merchantID string, amount *string,
	idempotencyKey string) (domain.Payment, error) {
	body := paymentRequestJSON{MerchantID: &merchantID, Amount: amount}
	return command.NewSimulatePaymentHandler(svc).Handle(ctx,
		command.SimulatePayment{NewPayment: newPayment(ctx, path, body, idempotencyKey)})
}

// RetryWebhook attempts one of the principal's deliveries now (command.RetryWebhook); a
// malformed id is 404 like another company's.
func RetryWebhook(ctx context.Context, svc command.WebhookRetrier, logID string) (domain.WebhookLogEntry, error) {
	p, _ := PrincipalFrom(ctx)
	return command.NewRetryWebhookHandler(svc).Handle(ctx, command.RetryWebhook{Principal: p, LogID: logID})
}
