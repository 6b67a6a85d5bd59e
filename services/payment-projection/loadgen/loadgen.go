// Package loadgen publishes payment lifecycles onto the bus, for the load generator command
// and the projection benchmarks.
package loadgen

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// Tenant is a company in an environment with its merchants.
type Tenant struct {
	CompanyID   string
	Environment string
	Merchants   []string
}

// Tenants returns companies × merchants fresh tenants in the test environment.
func Tenants(companies, merchantsPerCompany int) []Tenant {
	out := make([]Tenant, companies)
	for i := range out {
		out[i] = Tenant{CompanyID: uuid.NewString(), Environment: events.EnvTest}
		for range merchantsPerCompany {
			out[i].Merchants = append(out[i].Merchants, uuid.NewString())
		}
	}
	return out
}

// Lifecycle returns the created, processing and confirmed events of payment n of a run.
func Lifecycle(t Tenant, n int, at time.Time) []proto.Message {
	merchant := t.Merchants[n%len(t.Merchants)]
	id := uuid.NewString()
	wallet := fmt.Sprintf("0x%040x", n)
	customer := fmt.Sprintf("0x%040x", n+1)
	tx := fmt.Sprintf("0x%064x", n)
	amount := fmt.Sprintf("%d.%02d", 1+n%500, n%100)
	meta := func() *commonv1.EventMeta {
		return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.New(at), CompanyId: t.CompanyID,
			Environment: t.Environment, CorrelationId: id}
	}
	ts := at.UTC().Format(time.RFC3339Nano)
	return []proto.Message{
		&paymentv1.PaymentCreated{Meta: meta(), PaymentId: id, MerchantId: merchant, MerchantWallet: wallet,
			Amount: amount, Status: "PENDING", ExpiresAt: at.Add(time.Hour).UTC().Format(time.RFC3339Nano), CreatedAt: ts},
		&paymentv1.PaymentProcessing{Meta: meta(), PaymentId: id, MerchantId: merchant, MerchantWallet: wallet,
			CustomerWallet: customer, Amount: amount, TxHash: tx, Status: "PROCESSING"},
		&paymentv1.PaymentConfirmed{Meta: meta(), PaymentId: id, MerchantId: merchant, MerchantWallet: wallet,
			CustomerWallet: customer, Amount: amount, TxHash: tx, BlockExplorerUrl: "https://basescan.org/tx/" + tx,
			Status: "CONFIRMED", ConfirmedAt: ts},
	}
}

// Publish publishes n lifecycles spread over tenants with asynchronous JetStream publishes
// (at most inflight unacknowledged), each with Nats-Msg-Id = event id, and returns once every
// publish is acknowledged.
func Publish(ctx context.Context, js jetstream.JetStream, tenants []Tenant, n, inflight int) error {
	now := time.Now()
	for i := range n {
		for _, ev := range Lifecycle(tenants[i%len(tenants)], i, now) {
			msg, err := natsMsg(ev)
			if err != nil {
				return err
			}
			if _, err := js.PublishMsgAsync(msg); err != nil {
				return fmt.Errorf("publishing: %w", err)
			}
		}
		if i%inflight == inflight-1 {
			if err := wait(ctx, js); err != nil {
				return err
			}
		}
	}
	return wait(ctx, js)
}

func wait(ctx context.Context, js jetstream.JetStream) error {
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func natsMsg(ev proto.Message) (*nats.Msg, error) {
	subject, err := events.SubjectFor(ev)
	if err != nil {
		return nil, err
	}
	data, err := events.Marshal(ev)
	if err != nil {
		return nil, err
	}
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	m.Header.Set(bus.HeaderContentType, events.ContentTypeProtobuf)
	m.Header.Set(nats.MsgIdHdr, events.Meta(ev).GetEventId())
	return m, nil
}
