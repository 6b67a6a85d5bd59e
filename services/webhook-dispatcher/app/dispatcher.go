// Package app holds the webhook-dispatcher's use cases: creating deliveries from bus events,
// attempting them, the cron run of due retries, manual retries and the endpoint configuration.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/ratelimit"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Repository is the persistence the use cases need (implemented by adapters.Repository).
type Repository interface {
	UpdateEndpoint(ctx context.Context, company, env string, update func(*domain.Endpoint, bool) error) (domain.Endpoint, error)
	Deliverable(ctx context.Context, targets []domain.Target) (map[domain.Target]bool, error)
	CreateDeliveries(ctx context.Context, news []domain.NewDelivery, lease time.Duration) ([]domain.Claim, error)
	ClaimDue(ctx context.Context, limit int, lease time.Duration) ([]domain.Claim, error)
	ClaimStranded(ctx context.Context, limit int, lease time.Duration) ([]domain.Claim, error)
	ClaimOne(ctx context.Context, id uuid.UUID, company, env string, lease time.Duration) (domain.Claim, error)
	Renew(ctx context.Context, c domain.Claim, lease time.Duration) (bool, error)
	Release(ctx context.Context, c domain.Claim) error
	Record(ctx context.Context, c domain.Claim, a domain.Attempted) (domain.Delivery, error)
	RecordAll(ctx context.Context, recs []domain.Recording) (map[uuid.UUID]int, error)
	PruneDelivered(ctx context.Context, olderThan time.Duration, limit int) (int, error)
}

// Sender POSTs one attempt (implemented by adapters.Sender).
type Sender interface {
	Send(ctx context.Context, url string, headers map[string]string, body []byte) domain.Outcome
}

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
	Policy   domain.URLPolicy
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

// Dispatcher runs the use cases.
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

// attempt sends claim c once and records the outcome; trigger labels the metrics.
func (d *Dispatcher) attempt(ctx context.Context, c domain.Claim, trigger string) (domain.Delivery, error) {
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

// CronResult is the answer of a cron run (SPEC 4.8).
type CronResult struct {
	TotalProcessed int
	Successful     int
	Failed         int
}

// MaxPerCronRun is SPEC 8's bound on retries per cron run.
const MaxPerCronRun = 20

// RunDue attempts the deliveries that are due (failed ones whose retry time has come, and
// first attempts whose dispatcher died or that were left to the cron), at most limit (at most
// MaxPerCronRun), concurrently, and counts the outcomes.
func (d *Dispatcher) RunDue(ctx context.Context, limit int) (CronResult, error) {
	if limit <= 0 || limit > MaxPerCronRun {
		limit = MaxPerCronRun
	}
	claims, err := d.store.ClaimDue(ctx, limit, d.lease)
	if err != nil {
		return CronResult{}, err
	}
	type result struct {
		ok  bool
		err error
	}
	results := make(chan result, len(claims))
	for _, c := range claims {
		go func() {
			del, err := d.attempt(ctx, c, TriggerCron)
			results <- result{ok: del.Status == domain.StatusSuccess, err: err}
		}()
	}
	var res CronResult
	var errs []error
	for range claims {
		r := <-results
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case r.ok:
			res.Successful++
		default:
			res.Failed++
		}
		res.TotalProcessed++
	}
	if len(errs) > 0 {
		d.log.Error("recording cron attempts", "err", errors.Join(errs...))
	}
	return res, nil
}

// RetryNow attempts delivery id of company and env at once, whatever its status and schedule
// (SPEC 4.8), and returns the updated entry. Over the company's rate of manual retries it
// refuses with a *domain.RateLimitedError, before touching the store.
func (d *Dispatcher) RetryNow(ctx context.Context, company, env string, id uuid.UUID) (domain.Delivery, error) {
	if v := d.retries.Take(domain.Target{CompanyID: company, Environment: env}, d.now()); !v.Allowed {
		d.metrics.retriesLimited.Inc()
		return domain.Delivery{}, &domain.RateLimitedError{RetryAfter: v.Wait}
	}
	c, err := d.store.ClaimOne(ctx, id, company, env, d.lease)
	if err != nil {
		return domain.Delivery{}, err
	}
	del, err := d.attempt(ctx, c, TriggerManual)
	if err != nil {
		return domain.Delivery{}, fmt.Errorf("manual retry of %s: %w", id, err)
	}
	return del, nil
}
