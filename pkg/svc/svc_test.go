package svc_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
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

func streamNames() []string {
	var out []string
	for _, s := range events.Streams() {
		out = append(out, s.Name)
	}
	return out
}

var _ jetstream.JetStream
