package bus

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultStallAfter is how long a consumer with messages to apply may go without settling one
// before Progress.Stalled reports it (and bus_consumer_stalled is 1): well above the longest
// retry of an isolated failure (the backoff of MaxFailures attempts), so that a message that
// is being retried on its way to the dead-letter stream is not yet a stall.
const DefaultStallAfter = 60 * time.Second

// Progress is what a process knows of one durable consumer's progress, shared by every
// BatchConsumer of that durable in the process: when it last settled a message for good, the
// messages that failed alone and are being retried, how many messages JetStream said were
// pending, and the publish time of the newest message settled. It backs the consumer's gauges
// and its readiness check (Stalled).
type Progress struct {
	durable string
	now     func() time.Time

	mu        sync.Mutex
	started   time.Time
	settledAt time.Time // the last time a message was acknowledged or dead-lettered
	newest    time.Time // the publish time of the newest message settled
	pending   uint64    // what JetStream said remained after the last message fetched
	failing   map[uint64]*failure
}

// failure is a message that failed alone (its neighbours applied, the dependencies answered).
type failure struct {
	count     int
	published time.Time
	last      string
}

// maxFailing bounds the failures a Progress remembers; past it, the oldest entry is forgotten
// (its message then starts counting again, still bounded).
const maxFailing = 10_000

func newProgress(durable string, now func() time.Time) *Progress {
	if now == nil {
		now = time.Now
	}
	return &Progress{durable: durable, now: now, started: now(), failing: map[uint64]*failure{}}
}

// fetched records a fetched batch's deliveries; it returns how many were redeliveries.
func (p *Progress) fetched(ds []delivery) (redelivered int) {
	if len(ds) == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = ds[len(ds)-1].pending
	for _, d := range ds {
		if d.delivered > 1 {
			redelivered++
		}
	}
	return redelivered
}

// settled records messages acknowledged or dead-lettered: they are no longer unapplied.
func (p *Progress) settled(ds []delivery) {
	if len(ds) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settledAt = p.now()
	for _, d := range ds {
		delete(p.failing, d.streamSeq)
		if d.published.After(p.newest) {
			p.newest = d.published
		}
	}
}

// failedAlone records that d's message failed alone with err and returns how many times it has.
func (p *Progress) failedAlone(d delivery, err error) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.failing[d.streamSeq]
	if f == nil {
		if len(p.failing) >= maxFailing {
			p.forgetOldest()
		}
		f = &failure{published: d.published}
		p.failing[d.streamSeq] = f
	}
	f.count++
	f.last = err.Error()
	return f.count
}

func (p *Progress) forgetOldest() {
	var oldest uint64
	first := true
	for seq := range p.failing {
		if first || seq < oldest {
			oldest, first = seq, false
		}
	}
	delete(p.failing, oldest)
}

// snapshot is Progress at one moment.
type snapshot struct {
	retrying        int
	pending         uint64
	oldestUnapplied time.Duration
	sinceProgress   time.Duration
	settledAt       time.Time
}

func (p *Progress) snapshot() snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	s := snapshot{retrying: len(p.failing), pending: p.pending, settledAt: p.settledAt}
	last := p.settledAt
	if last.IsZero() {
		last = p.started
	}
	s.sinceProgress = now.Sub(last)
	// The oldest unapplied message: the oldest of those failing, else, while messages are
	// pending, at most as old as the newest message settled (the next one was published after
	// it) or, before any, as old as this process' consumer.
	var oldest time.Time
	for _, f := range p.failing {
		if oldest.IsZero() || f.published.Before(oldest) {
			oldest = f.published
		}
	}
	if oldest.IsZero() && p.pending > 0 {
		oldest = p.newest
		if oldest.IsZero() {
			oldest = p.started
		}
	}
	if !oldest.IsZero() {
		s.oldestUnapplied = max(0, now.Sub(oldest))
	}
	return s
}

// Stalled returns an error when the consumer has messages to apply (pending in JetStream or
// failing here) and has settled none for longer than after: it names how many wait, since
// when, and the last failure's reason. nil otherwise.
func (p *Progress) Stalled(after time.Duration) error {
	s := p.snapshot()
	if (s.pending == 0 && s.retrying == 0) || s.sinceProgress <= after {
		return nil
	}
	return fmt.Errorf("consumer %s stalled: %d pending, %d failing, nothing applied for %s, oldest unapplied message %s old",
		p.durable, s.pending, s.retrying, s.sinceProgress.Truncate(time.Second), s.oldestUnapplied.Truncate(time.Second))
}

// progressCollector exports the gauges of every Progress of a process.
type progressCollector struct {
	stallAfter time.Duration

	mu    sync.Mutex
	byKey map[string]*Progress

	oldest, retrying, pending, lastProgress, stalled *prometheus.Desc
}

func newProgressCollector() *progressCollector {
	l := []string{"consumer"}
	return &progressCollector{stallAfter: DefaultStallAfter, byKey: map[string]*Progress{},
		oldest: prometheus.NewDesc("bus_consumer_oldest_unapplied_seconds",
			"Age of the oldest message the consumer has to apply (0 when it has none), by consumer.", l, nil),
		retrying: prometheus.NewDesc("bus_consumer_retrying_messages",
			"Messages that failed alone and are being retried with backoff before they are dead-lettered, by consumer.", l, nil),
		pending: prometheus.NewDesc("bus_consumer_pending_messages",
			"Messages JetStream had not yet delivered to the consumer at its last fetch, by consumer.", l, nil),
		lastProgress: prometheus.NewDesc("bus_consumer_last_progress_timestamp_seconds",
			"When the consumer last acknowledged or dead-lettered a message (Unix time; 0 before any), by consumer.", l, nil),
		stalled: prometheus.NewDesc("bus_consumer_stalled",
			"1 while the consumer has messages to apply and has settled none for 60 s, else 0, by consumer.", l, nil),
	}
}

// progress returns the Progress of durable, made on first use.
func (c *progressCollector) progress(durable string) *Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.byKey[durable]
	if p == nil {
		p = newProgress(durable, nil)
		c.byKey[durable] = p
	}
	return p
}

func (c *progressCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.oldest, c.retrying, c.pending, c.lastProgress, c.stalled} {
		ch <- d
	}
}

func (c *progressCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	all := make([]*Progress, 0, len(c.byKey))
	for _, p := range c.byKey {
		all = append(all, p)
	}
	c.mu.Unlock()
	for _, p := range all {
		s := p.snapshot()
		var last, stalled float64
		if !s.settledAt.IsZero() {
			last = float64(s.settledAt.UnixNano()) / 1e9
		}
		if p.Stalled(c.stallAfter) != nil {
			stalled = 1
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.oldestUnapplied.Seconds(), p.durable)
		ch <- prometheus.MustNewConstMetric(c.retrying, prometheus.GaugeValue, float64(s.retrying), p.durable)
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(s.pending), p.durable)
		ch <- prometheus.MustNewConstMetric(c.lastProgress, prometheus.GaugeValue, last, p.durable)
		ch <- prometheus.MustNewConstMetric(c.stalled, prometheus.GaugeValue, stalled, p.durable)
	}
}
