package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// RouterConfig configures a Router. Only URL is required; doc.go explains the timing defaults.
type RouterConfig struct {
	// URL is the NATS server URL. The Router opens one connection for managing consumers and
	// dead-lettering, and one per consumer.
	URL string
	// NatsOptions are added to every connection (credentials, name...). By default the
	// connections reconnect forever: a subscription whose connection gave up would stop
	// delivering without stopping the Router.
	NatsOptions []nats.Option
	// Logger logs dead letters, panics and Watermill's messages; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil means not registered.
	Registerer prometheus.Registerer
	// HandlerTimeout bounds each attempt of a handler (its context is cancelled).
	HandlerTimeout time.Duration
	// Retry is the in-process retry of transient errors.
	Retry RetryConfig
	// DeadLetterTimeout bounds the publication of a dead letter.
	DeadLetterTimeout time.Duration
	// AckTimeout is how long the subscriber waits for a message to be acked or nacked before
	// giving up on it (JetStream redelivers it after its AckWait).
	AckTimeout time.Duration
	// CloseTimeout bounds how long Close waits for messages in flight.
	CloseTimeout time.Duration
}

func (c RouterConfig) withDefaults() RouterConfig {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.HandlerTimeout = orDefault(c.HandlerTimeout, DefaultHandlerTimeout)
	c.DeadLetterTimeout = orDefault(c.DeadLetterTimeout, DefaultDeadLetterTimeout)
	c.AckTimeout = orDefault(c.AckTimeout, DefaultAckTimeout)
	c.CloseTimeout = orDefault(c.CloseTimeout, DefaultCloseTimeout)
	c.Retry = c.Retry.withDefaults()
	return c
}

// connectOptions names a connection and makes it reconnect forever, before the caller's
// options (which may override both).
func connectOptions(name string, opts []nats.Option) []nats.Option {
	return append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1)}, opts...)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

type consumerEntry struct {
	spec    ConsumerSpec
	handler message.NoPublishHandlerFunc
}

// Router runs handlers on durable JetStream consumers through a Watermill message.Router.
// Add consumers, then Run; Close stops it. A Router runs once: to resume, make a new one,
// which continues where the durables stand.
type Router struct {
	cfg     RouterConfig
	nc      *nats.Conn
	js      jetstream.JetStream
	wm      *message.Router
	dl      *DeadLetterer
	metrics *handlerMetrics

	mu        sync.Mutex
	consumers []consumerEntry
	subs      []*wmnats.Subscriber
	started   bool
	closed    bool
}

// NewRouter connects to cfg.URL and returns a Router with no consumers.
func NewRouter(cfg RouterConfig) (*Router, error) {
	cfg = cfg.withDefaults()
	nc, err := nats.Connect(cfg.URL, connectOptions("bus router", cfg.NatsOptions)...)
	if err != nil {
		return nil, fmt.Errorf("new router: connecting to NATS: %w", err)
	}
	r, err := newRouter(cfg, nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return r, nil
}

func newRouter(cfg RouterConfig, nc *nats.Conn) (*Router, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("new router: %w", err)
	}
	dl, err := NewDeadLetterer(js, cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("new router: %w", err)
	}
	hm, err := newHandlerMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("new router: %w", err)
	}
	wm, err := message.NewRouter(message.RouterConfig{CloseTimeout: cfg.CloseTimeout}, watermillLogger(cfg.Logger))
	if err != nil {
		return nil, fmt.Errorf("new router: %w", err)
	}
	wm.AddMiddleware(middleware.CorrelationID)
	return &Router{cfg: cfg, nc: nc, js: js, wm: wm, dl: dl, metrics: hm}, nil
}

// AddConsumer registers handler on the durable consumer of spec. The consumer is created or
// updated (EnsureConsumer) when the Router runs. It fails for an invalid spec, a consumer
// already added, timeouts that break the rule of doc.go, or a Router already running.
func (r *Router) AddConsumer(spec ConsumerSpec, handler message.NoPublishHandlerFunc) error {
	if err := spec.validate(); err != nil {
		return err
	}
	spec = spec.withDefaults()
	if err := r.cfg.checkTiming(spec); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return fmt.Errorf("adding consumer %s: %w", spec.Durable, ErrRouterClosed)
	case r.started:
		return fmt.Errorf("adding consumer %s: %w", spec.Durable, ErrRouterStarted)
	}
	for _, c := range r.consumers {
		if c.spec.Stream == spec.Stream && c.spec.Durable == spec.Durable {
			return fmt.Errorf("%w: %s on %s", ErrDuplicateConsumer, spec.Durable, spec.Stream)
		}
	}
	r.consumers = append(r.consumers, consumerEntry{spec: spec, handler: handler})
	return nil
}

// Run ensures every consumer, subscribes, and handles messages until Close is called or ctx
// ends. Running is closed once every consumer is subscribed.
func (r *Router) Run(ctx context.Context) error {
	if err := r.setUp(ctx); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = r.wm.Close() })
	defer stop()
	if err := r.wm.Run(ctx); err != nil {
		return fmt.Errorf("running router: %w", err)
	}
	return nil
}

func (r *Router) setUp(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRouterClosed
	}
	if r.started {
		return ErrRouterStarted
	}
	r.started = true
	for _, c := range r.consumers {
		if err := EnsureConsumer(ctx, r.js, c.spec); err != nil {
			return fmt.Errorf("running router: %w", err)
		}
	}
	for _, c := range r.consumers {
		sub, err := newSubscriber(r.cfg, c.spec, r.cfg.Logger)
		if err != nil {
			return fmt.Errorf("running router: subscriber of %s: %w", c.spec.Durable, err)
		}
		r.subs = append(r.subs, sub)
		name := c.spec.Stream + "/" + c.spec.Durable
		h := r.wm.AddConsumerHandler(name, c.spec.Durable, sub, c.handler)
		mw := consumerMiddleware{spec: c.spec, cfg: r.cfg, dl: r.dl, metrics: r.metrics, log: r.cfg.Logger}
		h.AddMiddleware(mw.chain()...)
	}
	return nil
}

// Running is closed when the Router has subscribed every consumer (readiness). It stays
// closed after Close.
func (r *Router) Running() <-chan struct{} {
	return r.wm.Running()
}

// Close stops the Router: the subscribers stop taking messages, messages in flight get up
// to CloseTimeout to finish (those not acknowledged are redelivered later), and the
// connections close. The durable consumers stay. Close is idempotent.
func (r *Router) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	subs := r.subs
	r.mu.Unlock()

	var errs []error
	if err := r.wm.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing router: %w", err))
	}
	for _, s := range subs {
		if err := s.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing subscriber: %w", err))
		}
	}
	r.nc.Close()
	return errors.Join(errs...)
}
