package ports

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/services/webhook-dispatcher/api"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
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

// CommandServer serves the request-reply service of package api. Each request is handled on
// its own goroutine, so a cron run waiting on slow endpoints never holds up a configuration
// change or a manual retry.
type CommandServer struct {
	d        *app.Dispatcher
	log      *slog.Logger
	svc      micro.Service
	inflight sync.WaitGroup
}

// StartCommandServer registers the service on nc; stop it with Stop. The requests are handled
// with ctx, so those still running when ctx ends see it cancelled.
func StartCommandServer(ctx context.Context, nc *nats.Conn, d *app.Dispatcher, log *slog.Logger) (*CommandServer, error) {
	s := &CommandServer{d: d, log: log}
	svc, err := micro.AddService(nc, micro.Config{
		Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup,
		Description: "webhook endpoint configuration, manual retries and cron runs",
	})
	if err != nil {
		return nil, err
	}
	s.svc = svc
	handlers := map[string]func(context.Context, micro.Request){
		api.EndpointConfig: s.config,
		api.EndpointRetry:  s.retry,
		api.EndpointCron:   s.cron,
	}
	for name, h := range handlers {
		err := svc.AddEndpoint(name, micro.HandlerFunc(func(req micro.Request) {
			s.inflight.Add(1)
			go func() {
				defer s.inflight.Done()
				h(ctx, laterReply{Request: req, nc: nc})
			}()
		}), micro.WithEndpointSubject(api.Subject(name)))
		if err != nil {
			_ = svc.Stop()
			return nil, err
		}
	}
	return s, nil
}

// Stop stops taking requests and waits for those in flight.
func (s *CommandServer) Stop() error {
	err := s.svc.Stop()
	s.inflight.Wait()
	return err
}

// laterReply answers a request after micro's handler has returned. micro reads what a
// request's answer was (for its error statistics) as soon as the handler returns, so answering
// through micro.Request from another goroutine races with that read; laterReply publishes the
// same answer (micro's error headers included) on the connection instead. Answer options are
// not supported: no handler passes any.
type laterReply struct {
	micro.Request
	nc *nats.Conn
}

func (l laterReply) Respond(data []byte, _ ...micro.RespondOpt) error {
	return l.nc.Publish(l.Reply(), data)
}

func (l laterReply) RespondJSON(v any, _ ...micro.RespondOpt) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return l.Respond(data)
}

func (l laterReply) Error(code, description string, data []byte, _ ...micro.RespondOpt) error {
	msg := nats.NewMsg(l.Reply())
	msg.Header.Set(micro.ErrorHeader, description)
	msg.Header.Set(micro.ErrorCodeHeader, code)
	msg.Data = data
	return l.nc.PublishMsg(msg)
}

func (s *CommandServer) config(ctx context.Context, req micro.Request) {
	var in api.ConfigRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.fail(req, domain.Invalid("body", "malformed request"))
		return
	}
	out, err := s.d.Configure(ctx, app.Configure{CompanyID: in.CompanyID, Environment: in.Environment,
		URL: in.URL, Enabled: in.Enabled, RollSecret: in.RollSecret})
	if err != nil {
		s.fail(req, err)
		return
	}
	e := out.Endpoint
	s.reply(req, api.ConfigReply{URL: e.URL, Enabled: e.Enabled, Secret: out.Secret, SecretVersion: e.SecretVersion,
		CreatedAt: e.CreatedAt.UTC().Format(domain.TimeLayout), UpdatedAt: e.UpdatedAt.UTC().Format(domain.TimeLayout)})
}

func (s *CommandServer) retry(ctx context.Context, req micro.Request) {
	var in api.RetryRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.fail(req, domain.Invalid("body", "malformed request"))
		return
	}
	id, err := uuid.Parse(in.LogID)
	if err != nil {
		s.fail(req, domain.ErrNotFound)
		return
	}
	d, err := s.d.RetryNow(ctx, in.CompanyID, in.Environment, id)
	if err != nil {
		s.fail(req, err)
		return
	}
	s.reply(req, NewLogEntry(d))
}

func (s *CommandServer) cron(ctx context.Context, req micro.Request) {
	var in api.CronRequest
	if len(req.Data()) > 0 {
		if err := json.Unmarshal(req.Data(), &in); err != nil {
			s.fail(req, domain.Invalid("body", "malformed request"))
			return
		}
	}
	res, err := s.d.RunDue(ctx, in.Limit)
	if err != nil {
		s.fail(req, err)
		return
	}
	s.reply(req, api.CronReply{TotalProcessed: res.TotalProcessed, Successful: res.Successful, Failed: res.Failed})
}

func (s *CommandServer) reply(req micro.Request, v any) {
	if err := req.RespondJSON(v); err != nil {
		s.log.Warn("replying", "subject", req.Subject(), "err", err)
	}
}

func (s *CommandServer) fail(req micro.Request, err error) {
	var (
		v       *domain.ValidationError
		limited *domain.RateLimitedError
		body    api.Error
	)
	switch {
	case errors.As(err, &v):
		body = api.Error{Code: api.CodeInvalid, Message: v.Message, Field: v.Field}
	case errors.As(err, &limited):
		body = api.Error{Code: api.CodeRateLimited, Message: limited.Error(), RetryAfter: limited.Seconds()}
	case errors.Is(err, domain.ErrNotFound):
		body = api.Error{Code: api.CodeNotFound, Message: "webhook delivery not found"}
	case errors.Is(err, domain.ErrInFlight):
		body = api.Error{Code: api.CodeInFlight, Message: err.Error()}
	default:
		s.log.Error("webhooks request failed", "subject", req.Subject(), "err", err)
		body = api.Error{Code: api.CodeInternal, Message: "internal error"}
	}
	data, _ := json.Marshal(body)
	if err := req.Error(body.Code, body.Message, data); err != nil {
		s.log.Warn("replying with an error", "subject", req.Subject(), "err", err)
	}
}
