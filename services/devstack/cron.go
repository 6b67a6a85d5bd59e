package devstack

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// CronPath is the gateway's endpoint that runs due webhook retries.
const CronPath = "/api/v1/cron/webhooks/retry"

// RunCron calls url with the cron secret every interval until ctx is done, the way the
// production CronJob does. A 404 (gateway without the endpoint yet) is logged at debug level.
func RunCron(ctx context.Context, client *http.Client, url, secret string, every time.Duration, log *slog.Logger) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			callCron(ctx, client, url, secret, log)
		}
	}
}

func callCron(parent context.Context, client *http.Client, url, secret string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(parent, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		log.Error("cron call", "error", err)
		return
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := client.Do(req)
	if err != nil {
		if parent.Err() == nil { // not a shutdown
			log.Warn("cron call failed", "url", url, "error", err)
		}
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		log.Debug("cron call", "url", url, "status", resp.StatusCode)
	case resp.StatusCode == http.StatusNotFound:
		log.Debug("cron endpoint not served by this gateway yet", "url", url)
	default:
		log.Warn("cron call failed", "url", url, "answer", describe(resp))
	}
}
