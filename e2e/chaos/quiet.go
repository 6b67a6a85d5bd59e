package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/events"
)

// cronCaller calls the cron retry endpoint from several loops, as a scheduler would (more often
// than every 5 minutes: the run's retry schedule is seconds long), until the returned function
// is called.
func cronCaller(ctx context.Context, p *Partner, secret string, loops int, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range loops {
		wg.Go(func() {
			for ctx.Err() == nil {
				p.call(ctx, http.MethodGet, "/api/v1/cron/webhooks/retry", "Bearer "+secret, "", nil)
				sleep(ctx, every)
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// quiet tells whether the platform has nothing left to do: every durable consumer has taken and
// acknowledged every message, each relay has published its whole store, and no webhook delivery
// is pending or due for a retry. It returns what is still going on otherwise.
func quiet(ctx context.Context, db *pgxpool.Pool, js jetstream.JetStream) (string, error) {
	var busy []string
	for _, st := range append(events.Streams(), events.Stream{Name: "DEADLETTER"}) {
		s, err := js.Stream(ctx, st.Name)
		if err != nil {
			return "", err
		}
		lister := s.ListConsumers(ctx)
		for info := range lister.Info() {
			if info.NumPending > 0 || info.NumAckPending > 0 {
				busy = append(busy, fmt.Sprintf("%s: %d pending, %d unacknowledged", info.Name, info.NumPending, info.NumAckPending))
			}
		}
		if err := lister.Err(); err != nil {
			return "", err
		}
	}
	for _, r := range []struct{ schema, stream string }{{"merchant", "MERCHANTS"}, {"pool", "POOL"}} {
		var n int64
		if err := db.QueryRow(ctx, `SELECT count(*) FROM `+r.schema+`.events`).Scan(&n); err != nil {
			return "", err
		}
		s, err := js.Stream(ctx, r.stream)
		if err != nil {
			return "", err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return "", err
		}
		if uint64(n) != info.State.Msgs {
			busy = append(busy, fmt.Sprintf("relay %s: %d of %d events published", r.schema, info.State.Msgs, n))
		}
	}
	// The webhook dispatchers read the event streams with ordered consumers, their positions in
	// their database: every partition must be at each stream's end.
	rows, err := db.Query(ctx, `SELECT stream, min(seq) FROM webhooks.partition_positions GROUP BY stream`)
	if err != nil {
		return "", err
	}
	var stream string
	var least int64
	if _, err := pgx.ForEachRow(rows, []any{&stream, &least}, func() error {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		if last := s.CachedInfo().State.LastSeq; uint64(least) < last {
			busy = append(busy, fmt.Sprintf("webhook intake %s: a partition at %d of %d", stream, least, last))
		}
		return nil
	}); err != nil {
		return "", err
	}
	var pending, due int64
	err = db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'PENDING'),
            count(*) FILTER (WHERE status = 'FAILED' AND next_attempt_at IS NOT NULL) FROM webhooks.deliveries`).Scan(&pending, &due)
	if err != nil {
		return "", err
	}
	if pending > 0 || due > 0 {
		busy = append(busy, fmt.Sprintf("webhooks: %d pending, %d retries due", pending, due))
	}
	return strings.Join(busy, "; "), nil
}

// waitQuiet polls quiet until it holds twice in a row a second apart, or timeout passes.
func waitQuiet(ctx context.Context, db *pgxpool.Pool, js jetstream.JetStream, timeout time.Duration, ev *Events) error {
	deadline := time.Now().Add(timeout)
	calm, last, lastLog := 0, "", time.Now()
	for {
		busy, err := quiet(ctx, db, js)
		switch {
		case err != nil:
			calm, last = 0, err.Error()
		case busy == "":
			if calm++; calm >= 2 {
				return nil
			}
		default:
			calm, last = 0, busy
		}
		if time.Since(lastLog) > 10*time.Second && last != "" {
			ev.Logf("phase", "quiesce", "still busy: %s", last)
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			return errors.New("the platform did not quiet down within " + timeout.String() + ": " + last)
		}
		sleep(ctx, time.Second)
	}
}
