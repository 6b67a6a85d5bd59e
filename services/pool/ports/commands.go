package ports

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/app/command"
	"github.com/payplat/platform/services/pool/domain"
)

// CommandTimeout bounds one command, below the client's wait for the reply (api.Timeout) so that
// the caller gets the pool's answer rather than a timeout of its own.
const CommandTimeout = 8 * time.Second

// Application is the use cases the commands drive.
type Application struct {
	UpdateSettings  command.UpdateSettingsHandler
	SimulateDeposit command.SimulateDepositHandler
}

// CommandServer serves the pool's commands (package api) as a micro service.
type CommandServer struct {
	*natsx.Server
	app Application
}

// StartCommandServer registers the micro service api.ServiceName with its endpoints on nc; stop
// it with Stop (closing nc stops it too). A command runs to its end even when the service is
// stopping: its context is not ctx, which a SIGTERM cancels (a rolling restart would fail the
// commands in flight with 500), but one bounded by CommandTimeout; Stop waits for it.
func StartCommandServer(ctx context.Context, nc *nats.Conn, a Application, log *slog.Logger) (*CommandServer, error) {
	s := &CommandServer{app: a}
	srv, err := natsx.Serve(nc, natsx.ServerConfig{
		Service: micro.Config{Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup,
			Description: "treasury pool commands"},
		Context: context.WithoutCancel(ctx), Timeout: CommandTimeout, Errors: toAPIError, Log: log},
		natsx.Endpoint{Name: api.EndpointUpdateSettings, Subject: api.SubjectUpdateSettings, Handle: natsx.JSON(s.updateSettings)},
		natsx.Endpoint{Name: api.EndpointSimulateDeposit, Subject: api.SubjectSimulateDeposit, Handle: natsx.JSON(s.simulateDeposit)})
	if err != nil {
		return nil, err
	}
	s.Server = srv
	return s, nil
}

func (s *CommandServer) updateSettings(ctx context.Context, in api.UpdateSettingsRequest) (any, error) {
	return s.app.UpdateSettings.Handle(ctx, command.UpdateSettings{CompanyID: in.CompanyID,
		Environment: in.Environment, LowThreshold: in.LowThreshold, AutoTopUpEnabled: in.AutoTopUpEnabled,
		RequestID: in.RequestID})
}

func (s *CommandServer) simulateDeposit(ctx context.Context, in api.SimulateDepositRequest) (any, error) {
	out, err := s.app.SimulateDeposit.Handle(ctx, command.SimulateDeposit{CompanyID: in.CompanyID,
		Environment: in.Environment, Amount: in.Amount, RequestID: in.RequestID, CorrelationID: in.CorrelationID})
	if err != nil {
		return nil, err
	}
	return api.SimulateDepositReply{Transaction: out.Transaction, Balance: out.Balance}, nil
}

// toAPIError is the one place that maps errors to the pool API's codes; a command that did not
// finish and the service's own failures are unexpected and logged.
func toAPIError(err error) (*api.Error, bool) {
	var ve *validation.Error
	switch {
	case errors.As(err, &ve):
		return &api.Error{Code: api.CodeValidation, Message: ve.Message, Field: ve.Field}, false
	case errors.Is(err, money.ErrBalanceLimit):
		return &api.Error{Code: api.CodeValidation, Field: "amount",
			Message: "would take the pool's balance past the platform's limit of " + money.MaxBalance.String() + " USDC"}, false
	case errors.Is(err, domain.ErrInvalidAmount), errors.Is(err, domain.ErrAmountOutOfRange):
		return &api.Error{Code: api.CodeValidation, Field: "amount",
			Message: "must be a USDC amount greater than zero and at most " + money.MaxAmount.String()}, false
	case errors.Is(err, domain.ErrTestModeOnly):
		return &api.Error{Code: api.CodeTestModeOnly, Message: "only available with test keys"}, false
	case errors.Is(err, context.DeadlineExceeded) || pg.Unavailable(err):
		return &api.Error{Code: api.CodeUnavailable, Message: "the pool did not answer in time; retry"}, true
	default:
		return &api.Error{Code: api.CodeInternal, Message: "internal error"}, true
	}
}
