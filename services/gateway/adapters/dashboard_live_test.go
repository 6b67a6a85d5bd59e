package adapters_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/adapters"
	"github.com/payplat/platform/services/gateway/domain"
	webhookapi "github.com/payplat/platform/services/webhook-dispatcher/api"
)

// liveBus is a JetStream server with the platform's streams, and a feed on it.
func liveBus(t *testing.T) (*nats.Conn, jetstream.JetStream, *adapters.LiveEvents) {
	t.Helper()
	nc := testkit.ConnectNATS(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(t.Context(), js, bus.ProvisionOptions{}); err != nil {
		t.Fatal(err)
	}
	return nc, js, adapters.NewLiveEvents(nc, js, slog.New(slog.DiscardHandler))
}

// A feed carries its tenant's payment and pool events, webhook outcomes and key rolls, and
// nothing of another company or of the other environment.
func TestLiveEventsFollowOneTenant(t *testing.T) {
	t.Parallel()
	nc, js, live := liveBus(t)
	p := domain.Principal{CompanyID: uuid.New(), Environment: domain.Test}
	other := uuid.New().String()
	feed, err := live.Subscribe(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	company := p.CompanyID.String()
	for _, subject := range []string{"payment.test." + other + ".created", "payment.live." + company + ".created",
		"pool.test." + other + ".debited", "payment.test." + company + ".created", "pool.test." + company + ".debited"} {
		if _, err := js.Publish(t.Context(), subject, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	hooks, _ := webhookapi.OutcomeSubject("test", company)
	otherHooks, _ := webhookapi.OutcomeSubject("test", other)
	_ = nc.Publish(otherHooks, webhookapi.Outcome{DeliveryID: "theirs"}.Marshal())
	_ = nc.Publish(hooks, webhookapi.Outcome{DeliveryID: "d1", EventType: "payment.created", Status: "SUCCESS"}.Marshal())
	_ = nc.Publish(adapters.KeysRevokedSubject, []byte(other))
	_ = nc.Publish(adapters.KeysRevokedSubject, []byte(company))
	got := map[string]int{}
	deadline := time.After(10 * time.Second)
	for got[domain.LivePayment]+got[domain.LivePool]+got[domain.LiveWebhook]+got[domain.LiveKeysRolled] < 4 {
		select {
		case ev := <-feed:
			got[ev.Kind]++
			if ev.Kind == domain.LiveWebhook && ev.ID != "d1" {
				t.Errorf("another company's webhook outcome: %+v", ev)
			}
		case <-deadline:
			t.Fatalf("events of the tenant: %v", got)
		}
	}
	if got[domain.LivePayment] != 1 || got[domain.LivePool] != 1 || got[domain.LiveWebhook] != 1 || got[domain.LiveKeysRolled] != 1 {
		t.Errorf("kinds: %v", got)
	}
	select {
	case ev := <-feed:
		t.Errorf("an event of another tenant: %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

// Feeds that end while their events are still arriving close cleanly (a callback that runs
// after the end sends nothing), however often it happens.
func TestLiveEventsEndWhileBusy(t *testing.T) {
	t.Parallel()
	_, js, live := liveBus(t)
	p := domain.Principal{CompanyID: uuid.New(), Environment: domain.Test}
	subject := "payment.test." + p.CompanyID.String() + ".created"
	stop := testkit.RunInBackground(func(ctx context.Context) error {
		for ctx.Err() == nil {
			_, _ = js.PublishAsync(subject, []byte("{}"))
		}
		return nil
	})
	defer func() { _ = stop() }()
	for range 30 {
		ctx, cancel := context.WithCancel(context.Background())
		feed, err := live.Subscribe(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-feed:
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		cancel()
		for range feed {
			// Drained until the feed closes.
		}
	}
}
