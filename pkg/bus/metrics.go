package bus

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a settled message: the outcome label of bus_consumer_messages_total.
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

// register registers c on reg, or returns the collector already registered under the same
// description (several consumers or DeadLetterers in one process share their metrics). A nil
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
// (acked, dead_lettered, nacked): bus_consumer_messages_total; and the size of the batches it
// fetched: bus_consumer_batch_messages. With several replicas, each one's counts show its
// share of the consumer's work. The batch sizes show what a message costs: a consumer's
// transaction, fetch and wake-up are paid per batch, so one that runs in batches of one or two
// messages spends several times the CPU per message of one that runs in full batches.
type ConsumerMetrics struct {
	messages     *prometheus.CounterVec
	batches      *prometheus.HistogramVec
	redeliveries *prometheus.CounterVec
	retries      *prometheus.CounterVec
	progress     *progressCollector
}

// NewConsumerMetrics registers the consumers' metrics on reg (nil: not registered; shared when
// several consumers of one process register them): the counters and the histogram above,
// bus_consumer_redeliveries_total (messages fetched again after an earlier delivery),
// bus_consumer_retries_total (messages that failed alone and were handed back with backoff),
// and the gauges of each consumer's Progress (bus_consumer_oldest_unapplied_seconds,
// bus_consumer_retrying_messages, bus_consumer_pending_messages,
// bus_consumer_last_progress_timestamp_seconds, bus_consumer_stalled).
func NewConsumerMetrics(reg prometheus.Registerer) (*ConsumerMetrics, error) {
	c, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bus_consumer_messages_total",
		Help: "Messages a consumer settled, by consumer and outcome (acked, dead_lettered, nacked).",
	}, []string{"consumer", "outcome"}))
	if err != nil {
		return nil, err
	}
	h, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bus_consumer_batch_messages",
		Help:    "Messages in each batch a consumer fetched, by consumer.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11), // 1 to 1,024
	}, []string{"consumer"}))
	if err != nil {
		return nil, err
	}
	redeliveries, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bus_consumer_redeliveries_total",
		Help: "Messages a consumer fetched that JetStream had delivered before, by consumer.",
	}, []string{"consumer"}))
	if err != nil {
		return nil, err
	}
	retries, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bus_consumer_retries_total",
		Help: "Messages that failed alone (their neighbours applied, the dependencies answered) and were handed back to be retried with backoff, by consumer.",
	}, []string{"consumer"}))
	if err != nil {
		return nil, err
	}
	progress, err := register(reg, newProgressCollector())
	if err != nil {
		return nil, err
	}
	return &ConsumerMetrics{messages: c, batches: h, redeliveries: redeliveries, retries: retries, progress: progress}, nil
}

// Progress returns the progress of durable in this process, which every BatchConsumer of that
// durable shares; nil for a nil ConsumerMetrics.
func (m *ConsumerMetrics) Progress(durable string) *Progress {
	if m == nil {
		return nil
	}
	return m.progress.progress(durable)
}

// Fetched records a batch of n messages consumer fetched, redelivered of which JetStream had
// delivered before. A nil ConsumerMetrics records nothing.
func (m *ConsumerMetrics) Fetched(consumer string, n, redelivered int) {
	if m == nil || n == 0 {
		return
	}
	m.batches.WithLabelValues(consumer).Observe(float64(n))
	if redelivered > 0 {
		m.redeliveries.WithLabelValues(consumer).Add(float64(redelivered))
	}
}

// Retried counts a message of consumer handed back to be retried after it failed alone.
func (m *ConsumerMetrics) Retried(consumer string) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(consumer).Inc()
}

// Add counts n messages of consumer settled with outcome. A nil ConsumerMetrics counts nothing.
func (m *ConsumerMetrics) Add(consumer, outcome string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.messages.WithLabelValues(consumer, outcome).Add(float64(n))
}
