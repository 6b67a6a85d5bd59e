package api_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/pool/api"
)

// The client's error replies: a typed body, a micro error without one, and no service at all.
// The replies of the real service are tested with it (services/pool/service).
func TestClientErrors(t *testing.T) {
	nc, err := nats.Connect(testkit.NATS(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := api.NewClient(nc)
	ctx := context.Background()
	req := api.SimulateDepositRequest{CompanyID: "c", Environment: "test", Amount: "1.00"}

	var e *api.Error
	if _, err := c.SimulateDeposit(ctx, req); !errors.As(err, &e) || e.Code != api.CodeServiceUnavailable {
		t.Fatalf("no responder: %v", err)
	}

	svc, err := micro.AddService(nc, micro.Config{Name: api.ServiceName, Version: "1.0.0", QueueGroup: api.QueueGroup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	err = svc.AddEndpoint(api.EndpointSimulateDeposit, micro.HandlerFunc(func(r micro.Request) {
		_ = r.Error("400", "bad amount", []byte(`{"code":"VALIDATION_ERROR","message":"bad amount","field":"amount"}`))
	}), micro.WithEndpointSubject(api.SubjectSimulateDeposit))
	if err != nil {
		t.Fatal(err)
	}
	err = svc.AddEndpoint(api.EndpointUpdateSettings, micro.HandlerFunc(func(r micro.Request) {
		_ = r.Error("500", "internal error", nil)
	}), micro.WithEndpointSubject(api.SubjectUpdateSettings))
	if err != nil {
		t.Fatal(err)
	}

	if _, err := c.SimulateDeposit(ctx, req); !errors.As(err, &e) || *e != (api.Error{Code: api.CodeValidation,
		Message: "bad amount", Field: "amount"}) {
		t.Fatalf("typed error: %v", err)
	}
	if _, err := c.UpdateSettings(ctx, api.UpdateSettingsRequest{}); !errors.As(err, &e) ||
		*e != (api.Error{Code: "500", Message: "internal error"}) {
		t.Fatalf("error without a body: %v", err)
	}
}
