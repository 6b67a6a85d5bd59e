package app

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Attempt triggers: the metric label of what started an attempt.
const (
	TriggerEvent  = "event"
	TriggerCron   = "cron"
	TriggerManual = "manual"
)

// Metrics are the dispatcher's Prometheus metrics.
type Metrics struct {
	created   *prometheus.CounterVec
	attempts  *prometheus.CounterVec
	permanent prometheus.Counter
	duration  *prometheus.HistogramVec
	overflow  prometheus.Counter
	// retriesLimited counts manual retries refused for their company's rate.
	retriesLimited prometheus.Counter
	pruned         prometheus.Counter
}

// counter is a counter without labels.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// NewMetrics registers the metrics on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_deliveries_created_total",
			Help: "Delivery log entries created, by event type.",
		}, []string{"event_type"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_delivery_attempts_total",
			Help: "Delivery attempts, by trigger (event, cron, manual) and result (success, failure).",
		}, []string{"trigger", "result"}),
		permanent: counter("webhook_deliveries_permanently_failed_total",
			"Deliveries that failed their last automatic attempt."),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webhook_delivery_attempt_duration_seconds",
			Help:    "Duration of delivery attempts, by result.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"result"}),
		overflow: counter("webhook_endpoint_queue_overflow_total",
			"First attempts left to the cron run because their endpoint's queue was full."),
		retriesLimited: counter("webhook_manual_retries_limited_total",
			"Manual retries refused because their company was over WEBHOOK_MANUAL_RETRY_RATE."),
		pruned: counter("webhook_deliveries_pruned_total",
			"Delivered deliveries deleted after WEBHOOK_DELIVERY_RETENTION."),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.created, m.attempts, m.permanent, m.duration, m.overflow,
			m.retriesLimited, m.pruned} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Metrics) observeAttempt(trigger string, ok bool, d time.Duration) {
	result := "failure"
	if ok {
		result = "success"
	}
	m.attempts.WithLabelValues(trigger, result).Inc()
	m.duration.WithLabelValues(result).Observe(d.Seconds())
}
