package svc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	merchantv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant/v1"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

func options() svc.Options {
	return svc.Options{Name: "merchant", Schema: "merchant", Migrations: []fs.FS{eventstore.Migrations},
		RelayStream: "MERCHANTS"}
}

// The runtime provisions every stream, serves health, readiness and metrics, relays its event
// store to its stream, and stops cleanly.
func TestServiceRunsRelaysAndStops(t *testing.T) {
	t.Parallel()
	s := svctest.Start(t, options())
	ctx := context.Background()
	for _, name := range append([]string{events.DeadLetterStream}, streamNames()...) {
		if _, err := s.JS.Stream(ctx, name); err != nil {
			t.Errorf("stream %s not provisioned: %v", name, err)
		}
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": "go_goroutines"} {
		resp, err := http.Get("http://" + s.HealthAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q, want 200 with %q", path, resp.StatusCode, body, want)
		}
	}

	msg := &merchantv1.MerchantCreated{
		Meta:       &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: "c1", Environment: "test"},
		MerchantId: "m_1", Name: "Shop", Email: "a@b.co", WalletAddress: "0x0000000000000000000000000000000000000001",
		WalletUserId: "wu_1", CreatedAt: time.Now().UTC().Format(time.RFC3339),
	}
	ev, err := eventstore.NewEvent(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store.Append(ctx, "merchant-m_1", eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		st, err := s.JS.Stream(ctx, "MERCHANTS")
		if err != nil {
			return err
		}
		m, err := st.GetLastMsgForSubject(ctx, "merchant.test.c1.created")
		if err != nil {
			return err
		}
		if m.Header.Get("Nats-Msg-Id") != ev.ID.String() {
			return errors.New("relayed message has another id")
		}
		return nil
	})
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

func TestServiceRefusesMissingConfiguration(t *testing.T) {
	t.Parallel()
	err := svc.Run(context.Background(), svc.Config{}, options(), nil)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("got %v, want a configuration error", err)
	}
}

// The relay's lease comes from RELAY_LEASE and RELAY_LEASE_RENEW; unset, the relay's defaults
// apply (10 s, a fifth of it).
func TestRelayLeaseIsReadFromTheEnvironment(t *testing.T) {
	t.Parallel()
	cfg, err := config.LoadFrom[svc.Config](map[string]string{"RELAY_LEASE": "30s", "RELAY_LEASE_RENEW": "5s"})
	if err != nil || cfg.RelayLease.Duration != 30*time.Second || cfg.RelayLease.Renew != 5*time.Second {
		t.Fatalf("RelayLease %+v (%v)", cfg.RelayLease, err)
	}
	cfg, err = config.LoadFrom[svc.Config](nil)
	if err != nil || cfg.RelayLease.Duration != 10*time.Second || cfg.RelayLease.Renew != 0 {
		t.Fatalf("default RelayLease %+v (%v)", cfg.RelayLease, err)
	}
}

func streamNames() []string {
	var out []string
	for _, s := range events.Streams() {
		out = append(out, s.Name)
	}
	return out
}

var _ jetstream.JetStream

// proxyLater forwards connections from a reserved loopback port to target, but only once started:
// until then the port refuses connections, as a database that is not up yet does.
type proxyLater struct {
	addr, target string
}

func (p proxyLater) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", p.target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
}

// A service started before PostgreSQL and NATS answer waits for them and becomes ready, instead
// of exiting (found by the chaos check: services started beside a NATS server that was not
// listening yet exited with "no servers available for connection").
func TestServiceWaitsForDependenciesStartedAfterIt(t *testing.T) {
	t.Parallel()
	o := options()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: o.Migrations})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ports := testkit.FreePorts(t, 2)
	pgProxy := proxyLater{addr: fmt.Sprintf("127.0.0.1:%d", ports), target: u.Host}
	u.Host = pgProxy.addr
	natsPort := ports + 1
	cfg := svc.Config{Common: config.Common{DatabaseURL: u.String(), NATSURL: fmt.Sprintf("nats://127.0.0.1:%d", natsPort),
		HealthAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second}, StreamReplicas: 1, DuplicateWindow: time.Minute}
	ready := make(chan *svc.Runtime, 1)
	o.OnReady = func(rt *svc.Runtime) { ready <- rt }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, cfg, o, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() { cancel(); <-done })

	select {
	case err := <-done:
		t.Fatalf("the service exited while its dependencies were down: %v", err)
	case <-time.After(time.Second):
	}
	pgProxy.start(t)
	srv, err := natsx.StartEmbedded(natsx.EmbeddedOptions{Port: natsPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("service stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the service was not ready a minute after its dependencies came up")
	}
}

// A failure that waiting cannot cure (a migration that does not apply) still stops the service.
func TestServiceStopsOnAMigrationThatFails(t *testing.T) {
	t.Parallel()
	o := options()
	dsn := testkit.NewDatabase(t)
	o.Migrations = append(o.Migrations, fstest.MapFS{"99999_broken.sql": {Data: []byte("-- +goose Up\nSELECT nope FROM nowhere;\n")}})
	cfg := svc.Config{Common: config.Common{DatabaseURL: dsn, NATSURL: testkit.NATS(t), HealthAddr: "127.0.0.1:0",
		ShutdownTimeout: 10 * time.Second}, StreamReplicas: 1, DuplicateWindow: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := svc.Run(ctx, cfg, o, slog.New(slog.DiscardHandler))
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("Run = %v (ctx %v), want the migration's error at once", err, ctx.Err())
	}
}

// A service connected to a nats-server older than the platform's minimum stops at once with a
// message that names the minimum, instead of failing later on its consumers.
func TestServiceRefusesANATSServerOlderThanTheMinimum(t *testing.T) {
	t.Parallel()
	o := options()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: o.Migrations})
	cfg := svc.Config{Common: config.Common{DatabaseURL: dsn, NATSURL: testkit.OldNATSServer(t), HealthAddr: "127.0.0.1:0",
		ShutdownTimeout: 10 * time.Second}, StreamReplicas: 1, DuplicateWindow: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := svc.Run(ctx, cfg, o, slog.New(slog.DiscardHandler))
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "older than 2.10.0") {
		t.Fatalf("Run = %v, want a refusal naming the minimum", err)
	}
}

// A service whose own configuration does not load exits with status 2 before it starts, saying
// which service and why on standard error.
func TestMainWithRefusesAConfigurationThatDoesNotLoad(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	code := svc.MainWith("pool", func() (int, error) { return 0, errors.New("POOL_BATCH_SIZE: not a number") },
		func(int) svc.Options {
			t.Error("options made of a configuration that did not load")
			return svc.Options{}
		})
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	if got, want := string(out), "pool: POOL_BATCH_SIZE: not a number\n"; got != want {
		t.Errorf("standard error %q, want %q", got, want)
	}
}

// TuneGC sets the collector's target unless the environment chose one (not parallel: it
// changes the process's environment and collector).
func TestTuneGCKeepsAnOperatorsGOGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	gogc, set := os.LookupEnv("GOGC")
	t.Cleanup(func() {
		debug.SetGCPercent(before)
		if set {
			_ = os.Setenv("GOGC", gogc)
		} else {
			_ = os.Unsetenv("GOGC")
		}
	})
	_ = os.Unsetenv("GOGC")
	svc.TuneGC()
	if got := debug.SetGCPercent(123); got != svc.GCPercent {
		t.Errorf("without GOGC: collector target %d, want %d", got, svc.GCPercent)
	}
	_ = os.Setenv("GOGC", "123")
	svc.TuneGC()
	if got := debug.SetGCPercent(100); got != 123 {
		t.Errorf("with GOGC=123: collector target %d, want it left at 123", got)
	}
}
