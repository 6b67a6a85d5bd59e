package devstack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Target is a readiness URL of a named service.
type Target struct {
	Name string
	URL  string
}

// WaitReady polls every target's URL every `every` until each has answered 200, or ctx is
// done; the error then names the first service not ready and its last answer.
func WaitReady(ctx context.Context, client *http.Client, targets []Target, every time.Duration) error {
	for _, t := range targets {
		if err := waitOne(ctx, client, t, every); err != nil {
			return err
		}
	}
	return nil
}

func waitOne(ctx context.Context, client *http.Client, t Target, every time.Duration) error {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	var last string
	for {
		answer := probe(ctx, client, t.URL)
		if answer == "" {
			return nil
		}
		if ctx.Err() == nil || last == "" { // a probe cut short by the deadline says less
			last = answer
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (%s): %w; last answer: %s", t.Name, t.URL, context.Cause(ctx), last)
		case <-ticker.C:
		}
	}
}

// probe returns "" when url answers 200, else what it answered instead.
func probe(ctx context.Context, client *http.Client, url string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusOK {
		return ""
	}
	return strings.TrimSpace(resp.Status + " " + string(body))
}
