package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/payplat/platform/pkg/ratelimit"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// recordTimeout bounds one write of attempt results (a batch, then, if it failed, the one by
// one writes together).
const recordTimeout = 10 * time.Second

// leaseMargin is how long a claim outlives the attempt's timeout, for recording the outcome.
// It covers the recorder's own deadlines (a batch write, then the one by one writes) with room
// to spare: a lease that ran out while a live dispatcher was still writing its result would let
// the recovery pass or a cron run send a delivery again that its endpoint had already answered
// with a 2xx. A loaded machine with no fault at all can take seconds to write a few results,
// so the margin is generous. The price is paid only when a dispatcher dies: its stranded
// deliveries wait for their leases to run out.
const leaseMargin = 2*recordTimeout + 5*time.Second

// Config configures the Dispatcher.
type Config struct {
	Schedule domain.Schedule
	Timeout  time.Duration
	// EndpointConcurrency bounds the first attempts in flight per endpoint in this process.
	EndpointConcurrency int
	// EndpointQueue bounds the first attempts waiting per endpoint; beyond it they are left to
	// the cron run, so a dead endpoint never holds memory or workers of another company.
	EndpointQueue int
	// Announce, when set, is told of every recorded attempt (the service publishes it for the
	// dashboard's live view, package outcomes). It must not block.
	Announce func(c domain.Claim, status string, attempts int)
	// ManualRetries bounds the manual retries of each company and environment (zero: none).
	ManualRetries RetryLimit
}

// Dispatcher is the delivery engine: the first attempts on their lanes, their recording, the
// recovery of stranded ones and pruning, and the attempts the use cases of app/command ask for.
type Dispatcher struct {
	store    Repository
	sender   Sender
	box      *domain.SecretBox
	cfg      Config
	lease    time.Duration
	metrics  *Metrics
	log      *slog.Logger
	lanes    *lanes
	recorder *recorder
	inflight *inflight
	retries  *ratelimit.Keyed[domain.Target]
	now      func() time.Time
	recordTO time.Duration
}

// NewDispatcher returns a Dispatcher; zero fields of cfg take their defaults (the default retry
// schedule, a 10s attempt timeout, one first attempt in flight and 256 waiting per endpoint).
func NewDispatcher(store Repository, sender Sender, box *domain.SecretBox, cfg Config, m *Metrics, log *slog.Logger) *Dispatcher {
	if len(cfg.Schedule) == 0 {
		cfg.Schedule = domain.DefaultSchedule
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.EndpointConcurrency <= 0 {
		cfg.EndpointConcurrency = 1
	}
	if cfg.EndpointQueue <= 0 {
		cfg.EndpointQueue = 256
	}
	d := &Dispatcher{store: store, sender: sender, box: box, cfg: cfg, metrics: m, log: log,
		now: time.Now, recordTO: recordTimeout,
		// The lease outlives one attempt (its timeout) with room for recording it; a lane
		// renews it when the attempt starts, so time spent queued does not count.
		lease: cfg.Timeout + leaseMargin,
	}
	d.lanes = newLanes(cfg.EndpointConcurrency, cfg.EndpointQueue, d.runQueued)
	d.inflight = newInflight()
	d.retries = newRetryLimiter(cfg.ManualRetries)
	d.recorder = newRecorder(d)
	return d
}

// Wait blocks until every queued first attempt has finished or been released, and every
// finished one is recorded (after the context given to Start ends).
func (d *Dispatcher) Wait() {
	d.lanes.wait()
	d.recorder.stop()
}

// Start sets the lifetime of first attempts: once ctx ends or the returned stop is called,
// queued attempts are released for the cron run (Wait returns when the ones in flight are
// recorded). Call it before Enqueue.
func (d *Dispatcher) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	d.recorder.start()
	d.lanes.start(ctx)
	return cancel
}

// Lease is how long a claim holds its delivery: one attempt and its recording.
func (d *Dispatcher) Lease() time.Duration { return d.lease }

// AllowManualRetry takes one manual retry from the budget of target's company and environment
// (Config.ManualRetries); over it, it refuses with a *domain.RateLimitedError.
func (d *Dispatcher) AllowManualRetry(target domain.Target) error {
	if v := d.retries.Take(target, d.now()); !v.Allowed {
		d.metrics.retriesLimited.Inc()
		return &domain.RateLimitedError{RetryAfter: v.Wait}
	}
	return nil
}

// Attempt sends claim c once and records the outcome; trigger labels the metrics.
func (d *Dispatcher) Attempt(ctx context.Context, c domain.Claim, trigger string) (domain.Delivery, error) {
	a := d.try(ctx, c, trigger)
	// Record even when ctx ended meanwhile: the attempt happened.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.recordTO)
	defer cancel()
	del, err := d.store.Record(rctx, c, a)
	if err != nil {
		return domain.Delivery{}, err
	}
	d.logAttempt(ctx, c, a, del.Status, del.Attempts, trigger)
	return del, nil
}

// try sends claim c once and returns the result to record; trigger labels the metrics.
func (d *Dispatcher) try(ctx context.Context, c domain.Claim, trigger string) domain.Attempted {
	started := d.now()
	out := d.send(ctx, c)
	at := d.now().UTC().Truncate(time.Microsecond)
	a := domain.Attempted{Outcome: out, At: at, Status: domain.StatusSuccess}
	ok := out.Succeeded()
	if !ok {
		a.Status = domain.StatusFailed
		if next, more := d.cfg.Schedule.Next(c.Attempts+1, at); more {
			a.Next = &next
		} else if c.Attempts+1 == d.cfg.Schedule.MaxAttempts() {
			d.metrics.permanent.Inc()
		}
	}
	d.metrics.observeAttempt(trigger, ok, d.now().Sub(started))
	return a
}

// logAttempt logs a recorded attempt (failures at info level, successes at debug level) and
// announces it. A failure's detail (the underlying error, with the addresses dialled), which
// the partner-visible log never shows, is logged here for operators.
func (d *Dispatcher) logAttempt(ctx context.Context, c domain.Claim, a domain.Attempted, status string, attempts int, trigger string) {
	if d.cfg.Announce != nil {
		d.cfg.Announce(c, status, attempts)
	}
	level := slog.LevelInfo
	if a.Status == domain.StatusSuccess {
		level = slog.LevelDebug
	}
	if !d.log.Enabled(ctx, level) {
		return
	}
	d.log.Log(ctx, level, "webhook attempt", "delivery_id", c.ID, "event_id", c.EventID, "event_type", c.EventType,
		"company", c.CompanyID, "status", status, "attempts", attempts,
		"response_status", a.Outcome.StatusCode, "error", a.Outcome.Error, "detail", a.Outcome.Detail,
		"trigger", trigger)
}

// send performs the HTTP attempt of c with its endpoint's current URL and secret.
func (d *Dispatcher) send(ctx context.Context, c domain.Claim) domain.Outcome {
	if !c.Enabled || c.URL == "" {
		return domain.Outcome{Error: domain.FailDisabled}
	}
	secret, err := d.box.Open(c.CompanyID, c.Environment, c.SecretSealed)
	if err != nil {
		d.log.Error("cannot open webhook secret", "company", c.CompanyID, "err", err)
		return domain.Outcome{Error: domain.FailSecret, Detail: err.Error()}
	}
	headers, err := domain.Headers(secret, c.ID.String(), c.EventType, d.now(), c.Payload)
	if err != nil {
		return domain.Outcome{Error: domain.FailSigning, Detail: err.Error()}
	}
	// The attempt completes even when the dispatcher is stopping: its own timeout bounds it.
	return d.sender.Send(context.WithoutCancel(ctx), c.URL, headers, c.Payload)
}
