package bus

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Handler outcomes: the outcome label of bus_handler_duration_seconds.
const (
	OutcomeAcked        = "acked"
	OutcomeDeadLettered = "dead_lettered"
	OutcomeNacked       = "nacked"
)

func newDeadLetterCounter(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bus_dead_letters_total",
		Help: "Messages moved to the dead-letter stream, by consumer and kind of reason.",
	}, []string{"consumer", "reason_kind"})
	return register(reg, c)
}

// handlerMetrics are the Router's metrics of its handlers.
type handlerMetrics struct {
	duration *prometheus.HistogramVec
	retries  *prometheus.CounterVec
}

func newHandlerMetrics(reg prometheus.Registerer) (*handlerMetrics, error) {
	d, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bus_handler_duration_seconds",
		Help:    "Time from receiving a message to acking or nacking it (retries included), by consumer and outcome (acked, dead_lettered, nacked).",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 9), // 1ms .. 65s
	}, []string{"consumer", "outcome"}))
	if err != nil {
		return nil, err
	}
	r, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bus_handler_retries_total",
		Help: "In-process retries of handlers after a transient error, by consumer.",
	}, []string{"consumer"}))
	if err != nil {
		return nil, err
	}
	return &handlerMetrics{duration: d, retries: r}, nil
}

// register registers c on reg, or returns the collector already registered under the same
// description (several Routers or DeadLetterers in one process share their metrics). A nil
// reg leaves c unregistered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, fmt.Errorf("registering bus metrics: %w", err)
}

// ConsumerMetrics count the messages a batch consumer settled, by consumer and outcome
// (acked, dead_lettered, nacked): bus_consumer_messages_total. With several replicas, each
// one's counts show its share of the consumer's work.
type ConsumerMetrics struct {
	messages *prometheus.CounterVec
}

// NewConsumerMetrics registers the counter on reg (nil: not registered; shared when several
// consumers of one process register it).
func NewConsumerMetrics(reg prometheus.Registerer) (*ConsumerMetrics, error) {
	c, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bus_consumer_messages_total",
		Help: "Messages a consumer settled, by consumer and outcome (acked, dead_lettered, nacked).",
	}, []string{"consumer", "outcome"}))
	if err != nil {
		return nil, err
	}
	return &ConsumerMetrics{messages: c}, nil
}

// Add counts n messages of consumer settled with outcome. A nil ConsumerMetrics counts nothing.
func (m *ConsumerMetrics) Add(consumer, outcome string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.messages.WithLabelValues(consumer, outcome).Add(float64(n))
}
