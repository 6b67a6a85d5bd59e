package devstack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestRunCronCallsWithTheSecret(t *testing.T) {
	t.Parallel()
	var good, bad atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != CronPath || r.Header.Get("Authorization") != "Bearer s3cret" {
			bad.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		good.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	out := &testkit.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { RunCron(ctx, srv.Client(), srv.URL+CronPath, "s3cret", 10*time.Millisecond, testLogger(out)) })
	waitFor(t, 10*time.Second, func() error {
		if good.Load() < 3 {
			return fmt.Errorf("%d calls so far", good.Load())
		}
		return nil
	})
	cancel()
	wg.Wait() // returns once ctx is done
	if bad.Load() != 0 {
		t.Fatalf("%d calls without the secret", bad.Load())
	}
}

func TestRunCronLogs404AtDebug(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	out := &testkit.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go RunCron(ctx, srv.Client(), srv.URL+CronPath, "s", 10*time.Millisecond, testLogger(out))
	waitFor(t, 10*time.Second, contains(out, "level=DEBUG msg=\"cron endpoint not served by this gateway yet\""))
	if err := contains(out, "level=WARN")(); err == nil {
		t.Fatalf("404 logged as a warning:\n%s", out)
	}
}
