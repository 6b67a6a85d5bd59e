// Package svctest starts a service of the shared runtime in-process for tests, on a fresh
// database and a fresh JetStream server, and stops it when the test ends.
package svctest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/pkg/testkit"
)

// Started is a running service.
type Started struct {
	*svc.Runtime
	DatabaseURL string
	NATSURL     string
	// Stop shuts the service down and returns Run's error.
	Stop func() error
}

// Start runs the service described by o until the test ends, waits until its /readyz answers
// 200, and returns its runtime.
func Start(t testing.TB, o svc.Options) *Started {
	t.Helper()
	return StartWithNATS(t, o, testkit.NATS(t))
}

// StartWithNATS is Start on the NATS server at natsURL (a cluster's server, for example).
func StartWithNATS(t testing.TB, o svc.Options, natsURL string) *Started {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: o.Migrations})
	return StartOn(t, o, dsn, natsURL)
}

// StartOn runs the service against an existing database and NATS server; tune adjusts the
// configuration of the shared runtime first.
func StartOn(t testing.TB, o svc.Options, dsn, natsURL string, tune ...func(*svc.Config)) *Started {
	t.Helper()
	cfg := svc.Config{Common: config.Common{DatabaseURL: dsn, NATSURL: natsURL, HealthAddr: "127.0.0.1:0",
		ShutdownTimeout: 10 * time.Second}, StreamReplicas: 1, DuplicateWindow: 2 * time.Minute}
	for _, f := range tune {
		f(&cfg)
	}
	ready := make(chan *svc.Runtime, 1)
	o.OnReady = func(rt *svc.Runtime) { ready <- rt }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- svc.Run(ctx, cfg, o, log) }()
	var rt *svc.Runtime
	select {
	case rt = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("service %s did not start: %v", o.Name, err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("service %s not ready after 60s", o.Name)
	}
	stopped := false
	var stopErr error
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			stopErr = <-done
		}
		return stopErr
	}
	t.Cleanup(func() { _ = stop() })
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		resp, err := http.Get("http://" + rt.HealthAddr() + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	})
	return &Started{Runtime: rt, DatabaseURL: dsn, NATSURL: natsURL, Stop: stop}
}
