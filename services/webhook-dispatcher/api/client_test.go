package api_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/api"
)

// The client's error replies: the code from the header with the body's fields (as a server of
// before the one error shape answered), a micro error without a body, and no service at all. The replies of the real service are tested with it
// (services/webhook-dispatcher/service).
func TestClientErrors(t *testing.T) {
	nc, err := nats.Connect(testkit.NATS(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := api.NewClient(nc)
	ctx := context.Background()
	retry := api.RetryRequest{CompanyID: "acme", Environment: "test", LogID: "00000000-0000-0000-0000-000000000001"}

	var e *api.Error
	if _, err := c.Retry(ctx, retry); !errors.As(err, &e) || e.Code != api.CodeUnavailable {
		t.Fatalf("no responder: %v", err)
	}

	svc, err := micro.AddService(nc, micro.Config{Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	handlers := map[string]micro.HandlerFunc{
		api.EndpointRetry: func(r micro.Request) {
			_ = r.Error(api.CodeRateLimited, "slow down", []byte(`{"message":"slow down","retry_after":3}`))
		},
		api.EndpointCron: func(r micro.Request) { _ = r.Error(api.CodeInternal, "internal error", nil) },
	}
	for name, h := range handlers {
		if err := svc.AddEndpoint(name, h, micro.WithEndpointSubject(api.Subject(name))); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := c.Retry(ctx, retry); !errors.As(err, &e) ||
		*e != (api.Error{Code: api.CodeRateLimited, Message: "slow down", RetryAfter: 3}) {
		t.Fatalf("rate limited: %v", err)
	}
	if _, err := c.RunCron(ctx, api.CronRequest{}); !errors.As(err, &e) ||
		*e != (api.Error{Code: api.CodeInternal, Message: "internal error"}) {
		t.Fatalf("error without a body: %v", err)
	}
}
