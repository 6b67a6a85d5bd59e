package ports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/pg"
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
	app Application
	log *slog.Logger
	nc  *nats.Conn
	svc micro.Service
	// inflight is read-locked by each command being handled; Stop write-locks it to wait for
	// them to finish.
	inflight sync.RWMutex
}

// StartCommandServer registers the micro service api.ServiceName with its endpoints on nc; stop
// it with Stop (closing nc stops it too).
func StartCommandServer(ctx context.Context, nc *nats.Conn, a Application, log *slog.Logger) (*CommandServer, error) {
	s := &CommandServer{app: a, log: log, nc: nc}
	svc, err := micro.AddService(nc, micro.Config{Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup,
		Description: "treasury pool commands"})
	if err != nil {
		return nil, fmt.Errorf("adding micro service: %w", err)
	}
	s.svc = svc
	// A command runs to its end even when the service is stopping: its context is not the
	// service's, which a SIGTERM cancels (a rolling restart would fail the commands in flight
	// with 500), but one bounded by CommandTimeout; Stop waits for it.
	ctx = context.WithoutCancel(ctx)
	if err := svc.AddEndpoint(api.EndpointUpdateSettings, micro.ContextHandler(ctx, s.bounded(s.updateSettings)),
		micro.WithEndpointSubject(api.SubjectUpdateSettings)); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	if err := svc.AddEndpoint(api.EndpointSimulateDeposit, micro.ContextHandler(ctx, s.bounded(s.simulateDeposit)),
		micro.WithEndpointSubject(api.SubjectSimulateDeposit)); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops taking commands, lets those in flight finish (each within CommandTimeout) and
// flushes their replies.
func (s *CommandServer) Stop() error {
	err := s.svc.Stop()
	s.inflight.Lock()
	defer s.inflight.Unlock()
	return errors.Join(err, s.nc.Flush())
}

// bounded gives each command CommandTimeout and counts it in flight.
func (s *CommandServer) bounded(h func(context.Context, micro.Request)) func(context.Context, micro.Request) {
	return func(ctx context.Context, req micro.Request) {
		s.inflight.RLock()
		defer s.inflight.RUnlock()
		ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
		h(ctx, req)
	}
}

func (s *CommandServer) updateSettings(ctx context.Context, req micro.Request) {
	var in api.UpdateSettingsRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.fail(req, domain.Invalid("", "request is not valid JSON"))
		return
	}
	out, err := s.app.UpdateSettings.Handle(ctx, command.UpdateSettings{CompanyID: in.CompanyID,
		Environment: in.Environment, LowThreshold: in.LowThreshold, AutoTopUpEnabled: in.AutoTopUpEnabled,
		RequestID: in.RequestID})
	if err != nil {
		s.fail(req, err)
		return
	}
	s.respond(req, out)
}

func (s *CommandServer) simulateDeposit(ctx context.Context, req micro.Request) {
	var in api.SimulateDepositRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.fail(req, domain.Invalid("", "request is not valid JSON"))
		return
	}
	out, err := s.app.SimulateDeposit.Handle(ctx, command.SimulateDeposit{CompanyID: in.CompanyID,
		Environment: in.Environment, Amount: in.Amount, RequestID: in.RequestID, CorrelationID: in.CorrelationID})
	if err != nil {
		s.fail(req, err)
		return
	}
	s.respond(req, api.SimulateDepositReply{Transaction: out.Transaction, Balance: out.Balance})
}

func (s *CommandServer) respond(req micro.Request, v any) {
	if err := req.RespondJSON(v); err != nil {
		s.log.Error("responding to command", "subject", req.Subject(), "err", err)
	}
}

// fail answers with the typed error body; the micro error code is the HTTP status to use.
func (s *CommandServer) fail(req micro.Request, err error) {
	var (
		ve     *domain.ValidationError
		status string
		body   api.Error
	)
	switch {
	case errors.As(err, &ve):
		status, body = "400", api.Error{Code: api.CodeValidation, Message: ve.Message, Field: ve.Field}
	case errors.Is(err, domain.ErrInvalidAmount), errors.Is(err, domain.ErrAmountOutOfRange):
		status, body = "400", api.Error{Code: api.CodeValidation, Message: err.Error()}
	case errors.Is(err, domain.ErrTestModeOnly):
		status, body = "403", api.Error{Code: api.CodeTestModeOnly, Message: "only available with test keys"}
	case errors.Is(err, context.DeadlineExceeded) || pg.Unavailable(err):
		s.log.Warn("pool command did not finish", "subject", req.Subject(), "timeout", CommandTimeout, "err", err)
		status, body = "503", api.Error{Code: api.CodeUnavailable, Message: "the pool did not answer in time; retry"}
	default:
		s.log.Error("pool command failed", "subject", req.Subject(), "err", err)
		status, body = "500", api.Error{Code: api.CodeInternal, Message: "internal error"}
	}
	data, _ := json.Marshal(body)
	if err := req.Error(status, body.Message, data); err != nil {
		s.log.Error("responding to command", "subject", req.Subject(), "err", err)
	}
}
