package command

import (
	"context"
	"errors"
	"log/slog"

	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// MaxPerCronRun is SPEC 8's bound on retries per cron run.
const MaxPerCronRun = 20

// RunDueRetries is the cron run: it attempts the deliveries that are due (failed ones whose
// retry time has come, and first attempts whose dispatcher died or that were left to the cron),
// at most Limit of them (at most MaxPerCronRun; zero or less means MaxPerCronRun).
type RunDueRetries struct {
	Limit int
}

// CronResult is the answer of a cron run (SPEC 4.8).
type CronResult struct {
	TotalProcessed int
	Successful     int
	Failed         int
}

// RunDueRetriesHandler handles RunDueRetries.
type RunDueRetriesHandler struct {
	repo   app.Repository
	engine app.Engine
	log    *slog.Logger
}

// NewRunDueRetriesHandler returns a handler that claims the due deliveries in repo, has engine
// attempt them and logs to log the attempts it could not record.
func NewRunDueRetriesHandler(repo app.Repository, engine app.Engine, log *slog.Logger) RunDueRetriesHandler {
	return RunDueRetriesHandler{repo: repo, engine: engine, log: log}
}

// Handle attempts the due deliveries concurrently and counts the outcomes. An attempt whose
// outcome could not be recorded counts in TotalProcessed only, and is logged rather than
// failing the run.
func (h RunDueRetriesHandler) Handle(ctx context.Context, cmd RunDueRetries) (CronResult, error) {
	limit := cmd.Limit
	if limit <= 0 || limit > MaxPerCronRun {
		limit = MaxPerCronRun
	}
	claims, err := h.repo.ClaimDue(ctx, limit, h.engine.Lease())
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
			del, err := h.engine.Attempt(ctx, c, app.TriggerCron)
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
		h.log.Error("recording cron attempts", "err", errors.Join(errs...))
	}
	return res, nil
}
