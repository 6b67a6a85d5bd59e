package relay

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	relayed      prometheus.Counter
	failures     prometheus.Counter
	roundSeconds prometheus.Observer
	lag          prometheus.Gauge
	leader       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, name string) (*metrics, error) {
	labels := prometheus.Labels{"relay": name}
	m := &metrics{
		relayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "relay_events_published_total",
			Help: "Events published from the event store to JetStream.", ConstLabels: labels}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "relay_round_failures_total",
			Help: "Publish rounds that failed and were resynchronised.", ConstLabels: labels}),
		roundSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "relay_round_seconds",
			Help: "Duration of one read-publish-checkpoint round.", ConstLabels: labels, Buckets: prometheus.DefBuckets}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "relay_lag_seconds",
			Help: "Age of the last relayed event when it was published.", ConstLabels: labels}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "relay_is_leader",
			Help: "1 while this process is the active relay.", ConstLabels: labels}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.relayed, m.failures, m.roundSeconds.(prometheus.Histogram), m.lag, m.leader} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}
