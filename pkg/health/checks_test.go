package health_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/health"
	"github.com/payplat/platform/pkg/testkit"
)

type pingerFunc func(context.Context) error

func (f pingerFunc) Ping(ctx context.Context) error { return f(ctx) }

func checkCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestPostgresCheckNamesTheFailureWithoutLeakingTheConnectionString(t *testing.T) {
	t.Parallel()
	const dsn = "postgres://app:hunter2@db.internal:5432/app"
	tests := []struct {
		name    string
		pinger  interface{ Ping(context.Context) error }
		timeout time.Duration
		wantErr string
	}{
		{name: "up", pinger: pingerFunc(func(context.Context) error { return nil }), timeout: time.Second},
		{
			name:    "down",
			pinger:  pingerFunc(func(context.Context) error { return errors.New("failed to connect to " + dsn) }),
			timeout: time.Second, wantErr: "database unreachable",
		},
		{
			name:    "slow",
			pinger:  pingerFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }),
			timeout: 10 * time.Millisecond, wantErr: "database ping timed out",
		},
		{name: "nil", pinger: nil, timeout: time.Second, wantErr: "no database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			err := health.PostgresCheck(tt.pinger)(ctx)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("check = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("check = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("message leaks the connection string: %v", err)
			}
		})
	}
}

// The test pings a real PostgreSQL: DATABASE_URL, else the trust-auth server on 127.0.0.1:5432.
// Without one it fails in CI and skips elsewhere.
func TestPostgresCheckPassesOnALiveDatabaseAndFailsOnceClosed(t *testing.T) {
	t.Parallel()
	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	ctx := checkCtx(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		msg := "no PostgreSQL for TestPostgresCheckPassesOnALiveDatabaseAndFailsOnceClosed (set DATABASE_URL or run a trust-auth server on 127.0.0.1:5432): " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	check := health.PostgresCheck(conn)
	if err := check(ctx); err != nil {
		t.Fatalf("check against a live database = %v", err)
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := check(ctx); err == nil || err.Error() != "database unreachable" {
		t.Fatalf("check against a closed connection = %v, want database unreachable", err)
	}
}

func TestNATSCheckPassesOnALiveConnectionAndFailsOnAClosedOne(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	check := health.NATSCheck(nc)
	if err := check(checkCtx(t)); err != nil {
		t.Fatalf("check on a live connection = %v", err)
	}
	// Without a deadline the check supplies its own.
	if err := check(context.Background()); err != nil {
		t.Fatalf("check without deadline = %v", err)
	}
	nc.Close()
	if err := check(checkCtx(t)); err == nil || err.Error() != "nats closed" {
		t.Fatalf("check on a closed connection = %v, want nats closed", err)
	}
	if err := health.NATSCheck(nil)(checkCtx(t)); err == nil {
		t.Fatal("check on a nil connection succeeded")
	}
}

func TestStreamsCheckNamesEveryMissingStream(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := checkCtx(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "POOL", Subjects: []string{"pool.>"}}); err != nil {
		t.Fatalf("creating stream: %v", err)
	}
	tests := []struct {
		name    string
		streams []string
		wantErr string
	}{
		{name: "none asked", streams: nil},
		{name: "present", streams: []string{"POOL"}},
		{name: "one missing", streams: []string{"POOL", "PAYMENTS"}, wantErr: "missing streams: PAYMENTS"},
		{name: "several missing", streams: []string{"MERCHANTS", "POOL", "PAYMENTS"}, wantErr: "missing streams: MERCHANTS, PAYMENTS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := health.StreamsCheck(js, tt.streams...)(checkCtx(t))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("check = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("check = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The ready-made checks, wired into a Server as a service does, against a real NATS server:
// readiness follows the streams.
func TestReadyzFailsNamingTheMissingStreamUntilItExists(t *testing.T) {
	t.Parallel()
	nc := testkit.ConnectNATS(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	base := startServer(t, map[string]health.Check{
		"nats":    health.NATSCheck(nc),
		"streams": health.StreamsCheck(js, "PAYMENTS"),
	}, nil, nil)

	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"streams":"error: missing streams: PAYMENTS"`) {
		t.Fatalf("readyz before the stream exists = %d %s", code, body)
	}
	if _, err := js.CreateStream(checkCtx(t), jetstream.StreamConfig{Name: "PAYMENTS", Subjects: []string{"payment.>"}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if code, body := get(t, base+"/readyz"); code != http.StatusOK {
			return errors.New(body)
		}
		return nil
	})
}
