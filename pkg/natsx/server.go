package natsx

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

	"github.com/payplat/platform/pkg/validation"
)

// Error is the error reply of a service's request-reply API: a code from the service's api
// package, a message for people, the offending field of a request, and the seconds after which a
// request refused for its rate is accepted. The code is also the reply's micro error code header
// and the message its error header, so `nats micro` tools and a client without the body agree.
type Error struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Field      string `json:"field,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Code + ": " + e.Field + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

// CodeUnavailable is the code of the *Error that Call returns when no service answered.
const CodeUnavailable = "SERVICE_UNAVAILABLE"

// Call sends req to msg's subject, waiting at most timeout, and returns the reply decoded as Out.
// A failure comes back as *Error: the service's own, or one with CodeUnavailable when no service
// answered (none listens, none answered in time, the connection is closed, or nc is nil); errors
// of encoding and decoding come back as they are. With an error, the reply is Out's zero value.
func Call[Out any](ctx context.Context, nc *nats.Conn, msg *nats.Msg, timeout time.Duration, req any) (Out, error) {
	var out Out
	if err := call(ctx, nc, msg, timeout, req, &out); err != nil {
		var zero Out
		return zero, err
	}
	return out, nil
}

func call(ctx context.Context, nc *nats.Conn, msg *nats.Msg, timeout time.Duration, req, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := RequestJSON(ctx, nc, msg, req, out)
	var r *ReplyError
	switch {
	case errors.Is(err, ErrUnavailable):
		return &Error{Code: CodeUnavailable, Message: err.Error()}
	case errors.As(err, &r):
		// The body carries the fields; a body without them (a plain micro error, or a server of
		// before the one error shape, which put the code only in the header) takes the headers'.
		e := &Error{}
		if json.Unmarshal(r.Body, e) != nil {
			e = &Error{}
		}
		if e.Code == "" {
			e.Code = r.Code
		}
		if e.Message == "" {
			e.Message = r.Description
		}
		return e
	}
	return err
}

// Endpoint is one request of a service's API. Handle decodes the request, runs the use case and
// returns the reply, which is sent as JSON, or an error, which the server's Errors turns into
// the *Error sent back.
type Endpoint struct {
	Name    string
	Subject string
	Handle  func(ctx context.Context, req micro.Request) (any, error)
}

// JSON adapts a handler of a decoded request to Endpoint.Handle: a request whose data is not
// In's JSON is a *validation.Error, which the service's Errors answer with its validation code.
// A request with no data is In's zero value (an operator's `nats req` with no body), which the
// handler validates like any other.
func JSON[In any](h func(context.Context, In) (any, error)) func(context.Context, micro.Request) (any, error) {
	return func(ctx context.Context, req micro.Request) (any, error) {
		var in In
		if data := req.Data(); len(data) > 0 && json.Unmarshal(data, &in) != nil {
			return nil, validation.Invalid("", "request is not valid JSON")
		}
		return h(ctx, in)
	}
}

// ServerConfig says how a Server runs its requests.
type ServerConfig struct {
	// Service names the micro service; its QueueGroup lets replicas share the requests.
	Service micro.Config
	// Context is the requests' parent: a service whose requests must finish on shutdown passes
	// context.WithoutCancel of its own, one whose long requests should end with it passes its own.
	Context context.Context
	// Timeout bounds each request; zero leaves them unbounded (their parent still ends them).
	Timeout time.Duration
	// MaxInFlight bounds the requests handled at once (DefaultMaxInFlight when zero); beyond it
	// requests wait in the subscription.
	MaxInFlight int
	// Errors turns a handler's error into the reply. An unexpected error (a code the service
	// answers only for its own failures) is logged with its cause.
	Errors func(error) (reply *Error, unexpected bool)
	Log    *slog.Logger
}

// DefaultMaxInFlight bounds a server's requests at once when ServerConfig.MaxInFlight is zero.
const DefaultMaxInFlight = 64

// Server serves a request-reply API as a nats.go micro service. A micro endpoint calls its
// handler from one goroutine, so each request runs on a goroutine of its own: one slow request
// (a wallet provider, a webhook endpoint) never holds up the others. Those goroutines answer on
// the request's reply subject with the connection itself, with micro's error headers, because a
// micro.Request may only be answered inside its handler (micro reads the answer for its
// statistics as the handler returns); `nats micro stats` therefore counts the requests but not
// their errors or processing time.
type Server struct {
	nc       *nats.Conn
	cfg      ServerConfig
	service  micro.Service
	slots    chan struct{}
	inflight sync.WaitGroup
}

// Serve registers cfg.Service on nc with the endpoints; stop it with Stop (closing nc stops it
// too, without waiting for the requests in flight).
func Serve(nc *nats.Conn, cfg ServerConfig, endpoints ...Endpoint) (*Server, error) {
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Errors == nil {
		cfg.Errors = func(error) (*Error, bool) { return &Error{Code: "INTERNAL", Message: "internal error"}, true }
	}
	s := &Server{nc: nc, cfg: cfg, slots: make(chan struct{}, cfg.MaxInFlight)}
	svc, err := micro.AddService(nc, cfg.Service)
	if err != nil {
		return nil, fmt.Errorf("adding micro service %s: %w", cfg.Service.Name, err)
	}
	s.service = svc
	for _, e := range endpoints {
		if err := svc.AddEndpoint(e.Name, s.handler(e.Handle), micro.WithEndpointSubject(e.Subject)); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("adding endpoint %s: %w", e.Name, err)
		}
	}
	return s, nil
}

// Stop stops taking requests, waits for those in flight and flushes their replies.
func (s *Server) Stop() error {
	err := s.service.Stop()
	s.inflight.Wait()
	return errors.Join(err, s.nc.Flush())
}

func (s *Server) handler(h func(context.Context, micro.Request) (any, error)) micro.Handler {
	return micro.HandlerFunc(func(req micro.Request) {
		s.slots <- struct{}{}
		s.inflight.Add(1)
		go func() {
			defer func() { <-s.slots; s.inflight.Done() }()
			ctx, cancel := s.requestContext()
			defer cancel()
			out, err := h(ctx, req)
			if err == nil {
				var data []byte
				if data, err = json.Marshal(out); err == nil {
					s.respond(req, &nats.Msg{Data: data})
					return
				}
			}
			s.fail(req, err)
		}()
	})
}

func (s *Server) requestContext() (context.Context, context.CancelFunc) {
	if s.cfg.Timeout > 0 {
		return context.WithTimeout(s.cfg.Context, s.cfg.Timeout)
	}
	return context.WithCancel(s.cfg.Context)
}

func (s *Server) fail(req micro.Request, err error) {
	e, unexpected := s.cfg.Errors(err)
	if unexpected {
		s.cfg.Log.Error("request failed", "service", s.cfg.Service.Name, "subject", req.Subject(),
			"code", e.Code, "err", err)
	}
	body, _ := json.Marshal(e)
	s.respond(req, &nats.Msg{Data: body, Header: nats.Header{
		micro.ErrorHeader: []string{e.Message}, micro.ErrorCodeHeader: []string{e.Code}}})
}

// respond sends msg to the request's reply subject, as micro's Respond and Error do.
func (s *Server) respond(req micro.Request, msg *nats.Msg) {
	msg.Subject = req.Reply()
	if msg.Subject == "" {
		return
	}
	if err := s.nc.PublishMsg(msg); err != nil {
		s.cfg.Log.Warn("responding", "service", s.cfg.Service.Name, "subject", req.Subject(), "err", err)
	}
}
