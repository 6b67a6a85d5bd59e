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
	"github.com/payplat/platform/services/webhook-dispatcher/api"
	"github.com/payplat/platform/services/webhook-dispatcher/app/command"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// NewLogEntry renders a delivery.
func NewLogEntry(d domain.Delivery) api.LogEntry {
	return api.LogEntry{
		ID: d.ID.String(), EventID: d.EventID.String(), EventType: d.EventType, Status: d.Status,
		Attempts: d.Attempts, LastAttemptAt: formatTime(d.LastAttemptAt), NextRetryAt: formatTime(d.NextRetryAt()),
		ResponseStatus: d.ResponseStatus, ResponseBody: d.ResponseBody, ErrorMessage: d.ErrorMessage,
		CreatedAt: d.CreatedAt.UTC().Format(domain.TimeLayout),
	}
}

func formatTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(domain.TimeLayout)
	return &s
}

// Application is the use cases the request-reply service drives.
type Application struct {
	ConfigureEndpoint command.ConfigureEndpointHandler
	RetryDelivery     command.RetryDeliveryHandler
	RunDueRetries     command.RunDueRetriesHandler
}

// CommandServer serves the request-reply service of package api. Each request is handled on
// its own goroutine, so a cron run waiting on slow endpoints never holds up a configuration
// change or a manual retry.
type CommandServer struct {
	*natsx.Server
	app Application
}

// StartCommandServer registers the service on nc; stop it with Stop. The requests are handled
// with ctx, so those still running when ctx ends see it cancelled.
func StartCommandServer(ctx context.Context, nc *nats.Conn, a Application, log *slog.Logger) (*CommandServer, error) {
	s := &CommandServer{app: a}
	endpoint := func(name string, h func(context.Context, micro.Request) (any, error)) natsx.Endpoint {
		return natsx.Endpoint{Name: name, Subject: api.Subject(name), Handle: h}
	}
	srv, err := natsx.Serve(nc, natsx.ServerConfig{
		Service: micro.Config{Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup,
			Description: "webhook endpoint configuration, manual retries and cron runs"},
		Context: ctx, Errors: toAPIError, Log: log},
		endpoint(api.EndpointConfig, natsx.JSON(s.config)),
		endpoint(api.EndpointRetry, natsx.JSON(s.retry)),
		endpoint(api.EndpointCron, natsx.JSON(s.cron)))
	if err != nil {
		return nil, err
	}
	s.Server = srv
	return s, nil
}

func (s *CommandServer) config(ctx context.Context, in api.ConfigRequest) (any, error) {
	out, err := s.app.ConfigureEndpoint.Handle(ctx, command.ConfigureEndpoint{CompanyID: in.CompanyID,
		Environment: in.Environment, URL: in.URL, Enabled: in.Enabled, RollSecret: in.RollSecret})
	if err != nil {
		return nil, err
	}
	e := out.Endpoint
	return api.ConfigReply{URL: e.URL, Enabled: e.Enabled, Secret: out.Secret, SecretVersion: e.SecretVersion,
		CreatedAt: e.CreatedAt.UTC().Format(domain.TimeLayout), UpdatedAt: e.UpdatedAt.UTC().Format(domain.TimeLayout)}, nil
}

func (s *CommandServer) retry(ctx context.Context, in api.RetryRequest) (any, error) {
	id, err := uuid.Parse(in.LogID)
	if err != nil {
		return nil, domain.ErrNotFound
	}
	d, err := s.app.RetryDelivery.Handle(ctx, command.RetryDelivery{CompanyID: in.CompanyID,
		Environment: in.Environment, DeliveryID: id})
	if err != nil {
		return nil, err
	}
	return NewLogEntry(d), nil
}

// cron runs the due retries once; a request with no data runs them with the default limit.
func (s *CommandServer) cron(ctx context.Context, in api.CronRequest) (any, error) {
	res, err := s.app.RunDueRetries.Handle(ctx, command.RunDueRetries{Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return api.CronReply{TotalProcessed: res.TotalProcessed, Successful: res.Successful, Failed: res.Failed}, nil
}

// toAPIError is the one place that maps errors to the service's codes; only its own failures
// are unexpected and logged.
func toAPIError(err error) (*api.Error, bool) {
	var (
		v       *validation.Error
		limited *domain.RateLimitedError
	)
	switch {
	case errors.As(err, &v):
		return &api.Error{Code: api.CodeValidation, Message: v.Message, Field: v.Field}, false
	case errors.As(err, &limited):
		return &api.Error{Code: api.CodeRateLimited, Message: limited.Error(), RetryAfter: limited.Seconds()}, false
	case errors.Is(err, domain.ErrNotFound):
		return &api.Error{Code: api.CodeNotFound, Message: "webhook delivery not found"}, false
	case errors.Is(err, domain.ErrInFlight):
		return &api.Error{Code: api.CodeInFlight, Message: err.Error()}, false
	default:
		return &api.Error{Code: api.CodeInternal, Message: "internal error"}, true
	}
}
