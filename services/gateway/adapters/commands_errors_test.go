package adapters_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/adapters"
	"github.com/payplat/platform/services/gateway/domain"
	poolapi "github.com/payplat/platform/services/pool/api"
	webhookapi "github.com/payplat/platform/services/webhook-dispatcher/api"
)

// The gateway's errors for the pool service's and the webhook-dispatcher's error replies, and
// for their absence. Their successful replies are tested against the real services (ports).
func TestCommandErrorsBecomeGatewayErrors(t *testing.T) {
	nc := testkit.ConnectNATS(t)
	ctx := context.Background()
	company, p := uuid.New(), domain.Principal{CompanyID: uuid.New(), Environment: domain.Test}
	settings := func(pool *adapters.PoolCommands) error {
		_, err := pool.UpdateSettings(ctx, company, domain.Test, domain.PoolSettingsUpdate{}, "")
		return err
	}
	deposit := func(pool *adapters.PoolCommands) error {
		_, err := pool.SimulateDeposit(ctx, company, domain.Test, "1.00", "", "")
		return err
	}
	cron := func(w *adapters.Webhooks) error { _, err := w.RunCron(ctx); return err }
	retry := func(w *adapters.Webhooks) error { _, err := w.Retry(ctx, p, uuid.New()); return err }
	configure := func(w *adapters.Webhooks) error {
		_, err := w.Configure(ctx, p, domain.WebhookConfigChange{})
		return err
	}

	for name, pool := range map[string]*adapters.PoolCommands{"no connection": adapters.NewPoolCommands(nil),
		"no pool service": adapters.NewPoolCommands(nc)} {
		if err := settings(pool); !errors.Is(err, domain.ErrPoolServiceUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, w := range map[string]*adapters.Webhooks{"no connection": adapters.NewWebhooks(nil, nil),
		"no dispatcher": adapters.NewWebhooks(nil, nc)} {
		if err := cron(w); !errors.Is(err, domain.ErrWebhooksUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}

	serve(t, nc, poolapi.ServiceName, map[string]reply{
		poolapi.SubjectUpdateSettings:  {"400", `{"code":"VALIDATION_ERROR","message":"too low","field":"low_threshold"}`},
		poolapi.SubjectSimulateDeposit: {"403", `{"code":"TEST_MODE_ONLY","message":"only available with test keys"}`},
	})
	serve(t, nc, webhookapi.ServiceName, map[string]reply{
		webhookapi.Subject(webhookapi.EndpointCron):   {"500", `{"message":"internal error"}`},
		webhookapi.Subject(webhookapi.EndpointRetry):  {"429", `{"message":"slow down"}`},
		webhookapi.Subject(webhookapi.EndpointConfig): {"409", `{"message":"in flight"}`},
	})
	pool, w := adapters.NewPoolCommands(nc), adapters.NewWebhooks(nil, nc)
	var invalid *validation.Error
	if err := settings(pool); !errors.As(err, &invalid) || invalid.Field != "low_threshold" || invalid.Message != "too low" {
		t.Errorf("pool validation error: %v", err)
	}
	if err := deposit(pool); !errors.Is(err, domain.ErrPoolTestModeOnly) {
		t.Errorf("pool test mode only: %v", err)
	}
	if err := cron(w); err == nil || err.Error() != "webhook service error 500: internal error" {
		t.Errorf("webhooks 500: %v", err)
	}
	var limited *domain.WebhookRetryLimitedError
	if err := retry(w); !errors.As(err, &limited) || limited.RetryAfter != 1 {
		t.Errorf("webhooks rate limited without retry_after: %v", err)
	}
	if err := configure(w); !errors.Is(err, domain.ErrWebhookInFlight) {
		t.Errorf("webhooks in flight: %v", err)
	}
}

type reply struct{ code, body string }

// serve answers each subject with its error reply, as a micro service named name.
func serve(t *testing.T, nc *nats.Conn, name string, replies map[string]reply) {
	t.Helper()
	svc, err := micro.AddService(nc, micro.Config{Name: name, Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	for subject, r := range replies {
		err := svc.AddEndpoint(strings.ReplaceAll(subject, ".", "_"), micro.HandlerFunc(func(req micro.Request) {
			_ = req.Error(r.code, "error", []byte(r.body))
		}), micro.WithEndpointSubject(subject))
		if err != nil {
			t.Fatal(err)
		}
	}
}
