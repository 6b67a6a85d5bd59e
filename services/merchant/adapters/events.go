// Package adapters holds the merchant service's PostgreSQL side: the repository that appends
// the aggregate's events and updates its read tables in one transaction, the encoding of
// domain events to the protobuf contract, and the HD wallet provider.
package adapters

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	merchantv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant/v1"
	"github.com/payplat/platform/services/merchant/domain"
)

// Trace links the events a command appends to what caused them.
type Trace struct {
	CorrelationID string
	CausationID   string
}

type traceKey struct{}

// WithTrace returns ctx carrying t for the events appended under it.
func WithTrace(ctx context.Context, t Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

func traceFrom(ctx context.Context) Trace {
	t, _ := ctx.Value(traceKey{}).(Trace)
	return t
}

type entryTracesKey struct{}

// WithEntryTraces returns ctx carrying a trace per ledger entry id, for an append of entries
// caused by different messages (the ledger consumer's batches).
func WithEntryTraces(ctx context.Context, traces map[uuid.UUID]Trace) context.Context {
	return context.WithValue(ctx, entryTracesKey{}, traces)
}

// traceOf is the trace of ev: its entry's own, else the context's.
func traceOf(ctx context.Context, ev domain.Event) Trace {
	if e, ok := ev.(domain.LedgerEntryRecorded); ok {
		if traces, _ := ctx.Value(entryTracesKey{}).(map[uuid.UUID]Trace); traces != nil {
			if t, ok := traces[e.EntryID]; ok {
				return t
			}
		}
	}
	return traceFrom(ctx)
}

// StreamID is the event-store stream of a merchant.
func StreamID(id uuid.UUID) string { return "merchant-" + id.String() }

// encode turns a domain event of merchant m (company, environment) into an event to append.
func encode(ctx context.Context, companyID, env string, ev domain.Event) (eventstore.Event, error) {
	t := traceOf(ctx, ev)
	meta := func(at time.Time) *commonv1.EventMeta {
		return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.New(at), CompanyId: companyID,
			Environment: env, CorrelationId: t.CorrelationID, CausationId: t.CausationID}
	}
	var msg proto.Message
	switch e := ev.(type) {
	case domain.Created:
		msg = &merchantv1.MerchantCreated{Meta: meta(e.At), MerchantId: e.MerchantID.String(), Name: e.Name,
			Email: e.Email, WalletAddress: e.WalletAddress, WalletUserId: e.WalletUserID, CreatedAt: rfc3339(e.At)}
	case domain.StatusChanged:
		msg = &merchantv1.MerchantStatusChanged{Meta: meta(e.At), MerchantId: e.MerchantID.String(),
			FromStatus: string(e.From), ToStatus: string(e.To), Actor: string(e.Actor), Reason: e.Reason,
			ChangedAt: rfc3339(e.At)}
	case domain.LedgerEntryRecorded:
		msg = &merchantv1.MerchantLedgerEntryRecorded{Meta: meta(e.At), EntryId: e.EntryID.String(),
			MerchantId: e.MerchantID.String(), Type: string(e.Type), Amount: e.Amount.String(),
			BalanceBefore: e.BalanceBefore.String(), BalanceAfter: e.BalanceAfter.String(), PaymentId: e.PaymentID,
			TxHash: e.TxHash, Status: e.Status, Description: e.Description, CreatedAt: rfc3339(e.At)}
	default:
		return eventstore.Event{}, fmt.Errorf("unknown merchant event %T", ev)
	}
	return eventstore.NewEvent(msg)
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Decode turns a merchant event of the contract back into the domain event.
func Decode(msg proto.Message) (domain.Event, error) {
	switch m := msg.(type) {
	case *merchantv1.MerchantCreated:
		id, err := uuid.Parse(m.GetMerchantId())
		if err != nil {
			return nil, err
		}
		return domain.Created{MerchantID: id, Profile: domain.Profile{CompanyID: m.GetMeta().GetCompanyId(),
			Environment: m.GetMeta().GetEnvironment(), Name: m.GetName(), Email: m.GetEmail(),
			WalletAddress: m.GetWalletAddress(), WalletUserID: m.GetWalletUserId()}, At: parseTime(m.GetCreatedAt())}, nil
	case *merchantv1.MerchantStatusChanged:
		id, err := uuid.Parse(m.GetMerchantId())
		if err != nil {
			return nil, err
		}
		return domain.StatusChanged{MerchantID: id, From: domain.Status(m.GetFromStatus()),
			To: domain.Status(m.GetToStatus()), Actor: domain.Actor(m.GetActor()), Reason: m.GetReason(),
			At: parseTime(m.GetChangedAt())}, nil
	case *merchantv1.MerchantLedgerEntryRecorded:
		return decodeEntry(m)
	default:
		return nil, fmt.Errorf("not a merchant event: %T", msg)
	}
}

func decodeEntry(m *merchantv1.MerchantLedgerEntryRecorded) (domain.Event, error) {
	id, err1 := uuid.Parse(m.GetMerchantId())
	entry, err2 := uuid.Parse(m.GetEntryId())
	amount, err3 := money.ParseSigned(m.GetAmount())
	before, err4 := money.ParseSigned(m.GetBalanceBefore())
	after, err5 := money.ParseSigned(m.GetBalanceAfter())
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			return nil, fmt.Errorf("decoding ledger entry %s: %w", m.GetEntryId(), err)
		}
	}
	return domain.LedgerEntryRecorded{EntryID: entry, MerchantID: id, Type: domain.EntryType(m.GetType()),
		Amount: amount, BalanceBefore: before, BalanceAfter: after, PaymentID: m.GetPaymentId(),
		TxHash: m.GetTxHash(), Status: m.GetStatus(), Description: strings.TrimSpace(m.GetDescription()),
		At: parseTime(m.GetCreatedAt())}, nil
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t.UTC()
}
