// Package ports holds the merchant service's inputs: the command API over NATS request-reply
// (a nats.go micro service) and the ledger consumers of the PAYMENTS and MERCHANT_WALLETS
// streams.
package ports

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/app/command"
	"github.com/payplat/platform/services/merchant/app/query"
	"github.com/payplat/platform/services/merchant/domain"
)

// Application is the use cases the command API drives.
type Application struct {
	CreateMerchant command.CreateMerchantHandler
	ChangeStatus   command.ChangeStatusHandler
	MerchantStatus query.MerchantStatusHandler
}

// CommandServer is the merchant micro service.
type CommandServer struct {
	*natsx.Server
	app Application
}

// StartCommandServer registers the micro service "merchant" on nc with its endpoints in queue
// group "merchant", so replicas share the requests. Each command runs with a deadline of
// timeout: without one, a wallet provider or database that never answers would hold a slot,
// and the connection of the command's transaction, for ever.
func StartCommandServer(nc *nats.Conn, a Application, version string, timeout time.Duration,
	log *slog.Logger) (*CommandServer, error) {
	if timeout <= 0 {
		return nil, errors.New("merchant commands: the command timeout must be positive")
	}
	s := &CommandServer{app: a}
	endpoint := func(name string, h func(context.Context, micro.Request) (any, error)) natsx.Endpoint {
		return natsx.Endpoint{Name: name, Subject: api.Subject(name), Handle: traced(h)}
	}
	srv, err := natsx.Serve(nc, natsx.ServerConfig{
		Service: micro.Config{Name: api.ServiceName, Version: version, QueueGroup: api.QueueGroup,
			Description: "Merchant aggregate: create, status changes, status query"},
		Timeout: timeout, Errors: toAPIError, Log: log},
		endpoint(api.EndpointCreate, natsx.JSON(s.create)),
		endpoint(api.EndpointSetStatus, natsx.JSON(s.setStatus(domain.ActorCompany))),
		endpoint(api.EndpointAdminSetStatus, natsx.JSON(s.setStatus(domain.ActorPlatform))),
		endpoint(api.EndpointGetStatus, natsx.JSON(s.getStatus)))
	if err != nil {
		return nil, err
	}
	s.Server = srv
	return s, nil
}

// traced gives the command the caller's request id as its correlation and causation ids.
func traced(h func(context.Context, micro.Request) (any, error)) func(context.Context, micro.Request) (any, error) {
	return func(ctx context.Context, req micro.Request) (any, error) {
		rid := req.Headers().Get(api.HeaderRequestID)
		return h(adapters.WithTrace(ctx, adapters.Trace{CorrelationID: rid, CausationID: rid}), req)
	}
}

// toAPIError is the one place that maps errors to the command API's codes; the service's own
// failures (a wallet provider or database that does not answer, a bug) are unexpected and logged.
func toAPIError(err error) (*api.Error, bool) {
	var v *validation.Error
	switch {
	case errors.As(err, &v):
		return &api.Error{Code: api.CodeValidation, Message: v.Message, Field: v.Field}, false
	case errors.Is(err, domain.ErrDuplicateEmail):
		return &api.Error{Code: api.CodeDuplicate, Message: "a merchant with this email already exists", Field: "email"}, false
	case errors.Is(err, domain.ErrNotFound):
		return &api.Error{Code: api.CodeNotFound, Message: "merchant not found"}, false
	case errors.Is(err, domain.ErrStatusLocked):
		return &api.Error{Code: api.CodeStatusLocked,
			Message: "the merchant is FROZEN, BLACKLISTED or SUSPENDED; only the platform can change its status"}, false
	case errors.Is(err, domain.ErrWalletUnavailable):
		return &api.Error{Code: api.CodeWalletUnavailable, Message: "the wallet provider is unavailable; retry later"}, true
	case errors.Is(err, context.DeadlineExceeded):
		// The command ran past its deadline (a database that does not answer): retrying the same
		// request is safe (a creation carries its merchant id under an Idempotency-Key).
		return &api.Error{Code: api.CodeServiceUnavailable, Message: "the command did not finish in time; retry later"}, true
	default:
		return &api.Error{Code: api.CodeInternal, Message: "internal error"}, true
	}
}

func parseID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		// An id that cannot exist names no merchant.
		return uuid.Nil, domain.ErrNotFound
	}
	return id, nil
}

func (s *CommandServer) create(ctx context.Context, r api.CreateRequest) (any, error) {
	if r.CompanyID == "" || (r.Environment != "test" && r.Environment != "live") {
		return nil, validation.Invalid("", "company_id and environment (test or live) are required")
	}
	var id uuid.UUID
	if r.MerchantID != "" {
		var err error
		if id, err = uuid.Parse(r.MerchantID); err != nil {
			return nil, validation.Invalid("merchant_id", "must be a UUID")
		}
	}
	m, err := s.app.CreateMerchant.Handle(ctx, command.CreateMerchant{MerchantID: id, CompanyID: r.CompanyID,
		Environment: r.Environment, Name: r.Name, Email: r.Email})
	if err != nil {
		return nil, err
	}
	return merchantReply(m), nil
}

func (s *CommandServer) setStatus(actor domain.Actor) func(context.Context, api.SetStatusRequest) (any, error) {
	return func(ctx context.Context, r api.SetStatusRequest) (any, error) {
		scope := app.Scope{CompanyID: r.CompanyID, Environment: r.Environment}
		if actor == domain.ActorPlatform {
			scope = app.Scope{All: true}
		} else if r.CompanyID == "" || r.Environment == "" {
			return nil, validation.Invalid("", "company_id and environment are required")
		}
		id, err := parseID(r.MerchantID)
		if err != nil {
			return nil, err
		}
		m, err := s.app.ChangeStatus.Handle(ctx, command.ChangeStatus{MerchantID: id, Scope: scope, Actor: actor,
			Status: r.Status, Reason: r.Reason})
		if err != nil {
			return nil, err
		}
		return merchantReply(m), nil
	}
}

func (s *CommandServer) getStatus(ctx context.Context, r api.GetStatusRequest) (any, error) {
	id, err := parseID(r.MerchantID)
	if err != nil {
		return nil, err
	}
	m, err := s.app.MerchantStatus.Handle(ctx, query.MerchantStatus{MerchantID: id,
		Scope: app.Scope{CompanyID: r.CompanyID, Environment: r.Environment}})
	if err != nil {
		return nil, err
	}
	snap := m.Snapshot()
	return api.StatusReply{MerchantID: snap.ID.String(), Name: snap.Name, WalletAddress: snap.WalletAddress,
		Status: string(snap.Status), Active: snap.Status == domain.StatusActive}, nil
}

func merchantReply(m *domain.Merchant) api.Merchant {
	s := m.Snapshot()
	return api.Merchant{ID: s.ID.String(), CompanyID: s.CompanyID, Environment: s.Environment, Name: s.Name,
		Email: s.Email, WalletAddress: s.WalletAddress, WalletUserID: s.WalletUserID, Status: string(s.Status),
		Balance: s.Balance.String(), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}
