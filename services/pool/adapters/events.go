package adapters

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/eventstore"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	poolv1 "github.com/payplat/platform/proto-events/gen/payplat/pool/v1"

	"github.com/payplat/platform/services/pool/domain"
)

// toEvents encodes the pool's changes as events of the contract (proto-events pool.v1):
// DEPOSIT → pool.deposit_received, WITHDRAWAL → pool.withdrawal_completed, DEBIT →
// pool.debited, CREDIT → pool.credited, settings → pool.settings_changed, and the crossing of
// the threshold → pool.low_balance. A movement's id is its event's id, and its creation time
// the event's occurred_at. The events hold everything the read tables hold, so that the
// tables can be rebuilt from them (ReadModel); what a webhook event has no SPEC 6.4 field for
// (a deposit's time of finality and description, a withdrawal's time of finality) goes into
// its internal fields.
func toEvents(id domain.ID, changes []domain.Change) ([]eventstore.Event, error) {
	out := make([]eventstore.Event, 0, len(changes))
	for _, c := range changes {
		msg, err := toMessage(id, c)
		if err != nil {
			return nil, err
		}
		ev, err := eventstore.NewEvent(msg)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func toMessage(id domain.ID, c domain.Change) (proto.Message, error) {
	switch c := c.(type) {
	case *domain.Movement:
		return movementMessage(id, c)
	case *domain.SettingsChanged:
		return &poolv1.PoolSettingsChanged{
			Meta:         meta(id, uuid.New(), c.At, c.Cause),
			LowThreshold: c.Settings.LowThreshold.String(), AutoTopUpEnabled: c.Settings.AutoTopUpEnabled,
			ChangedAt: rfc3339(c.At),
		}, nil
	case *domain.LowBalance:
		return &poolv1.PoolLowBalance{
			Meta:      meta(id, uuid.New(), c.At, c.Cause),
			CompanyId: id.CompanyID, Balance: c.Balance.String(), Threshold: c.Threshold.String(),
			Currency: domain.Currency, Timestamp: rfc3339(c.At),
		}, nil
	default:
		return nil, fmt.Errorf("pool: unknown change %T", c)
	}
}

func movementMessage(id domain.ID, m *domain.Movement) (proto.Message, error) {
	md := meta(id, m.ID, m.CreatedAt, m.Cause)
	switch m.Type {
	case domain.Deposit:
		return &poolv1.PoolDepositReceived{
			Meta: md, CompanyId: id.CompanyID, Amount: m.Amount.String(), TxHash: m.TxHash,
			BalanceBefore: m.BalanceBefore.String(), BalanceAfter: m.BalanceAfter.String(),
			Currency: domain.Currency, Timestamp: rfc3339(m.CreatedAt),
			ConfirmedAt: rfc3339(m.ConfirmedAt), Description: m.Description,
		}, nil
	case domain.Withdrawal:
		magnitude, err := m.Amount.Neg()
		if err != nil {
			return nil, err
		}
		return &poolv1.PoolWithdrawalCompleted{
			Meta: md, WithdrawalId: m.WithdrawalID, CompanyId: id.CompanyID, Amount: magnitude.String(),
			ToAddress: m.ToAddress, TxHash: m.TxHash,
			BalanceBefore: m.BalanceBefore.String(), BalanceAfter: m.BalanceAfter.String(),
			Currency: domain.Currency, Timestamp: rfc3339(m.CreatedAt), ConfirmedAt: rfc3339(m.ConfirmedAt),
		}, nil
	case domain.Debit:
		p := paymentOf(m)
		return &poolv1.PoolDebited{
			Meta: md, MovementId: m.ID.String(), PaymentId: p.PaymentID, MerchantId: p.MerchantID,
			MerchantName: p.MerchantName, Amount: m.Amount.String(),
			BalanceBefore: m.BalanceBefore.String(), BalanceAfter: m.BalanceAfter.String(),
			TxHash: m.TxHash, Status: string(m.Status), Description: m.Description,
			CreatedAt: rfc3339(m.CreatedAt), ConfirmedAt: rfc3339(m.ConfirmedAt),
		}, nil
	case domain.Credit:
		p := paymentOf(m)
		return &poolv1.PoolCredited{
			Meta: md, MovementId: m.ID.String(), PaymentId: p.PaymentID, MerchantId: p.MerchantID,
			MerchantName: p.MerchantName, Amount: m.Amount.String(),
			BalanceBefore: m.BalanceBefore.String(), BalanceAfter: m.BalanceAfter.String(),
			TxHash: m.TxHash, Status: string(m.Status), Description: m.Description,
			CreatedAt: rfc3339(m.CreatedAt), ConfirmedAt: rfc3339(m.ConfirmedAt),
		}, nil
	default:
		return nil, fmt.Errorf("pool: unknown movement type %q", m.Type)
	}
}

func paymentOf(m *domain.Movement) domain.PaymentRef {
	if m.Payment == nil {
		return domain.PaymentRef{}
	}
	return *m.Payment
}

func meta(id domain.ID, eventID uuid.UUID, at time.Time, cause domain.Cause) *commonv1.EventMeta {
	corr := cause.CorrelationID
	if corr == "" {
		corr = cause.EventID
	}
	return &commonv1.EventMeta{
		EventId: eventID.String(), OccurredAt: timestamppb.New(at), CompanyId: id.CompanyID,
		Environment: id.Environment, CorrelationId: corr, CausationId: cause.EventID,
	}
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
