package ports

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"

	"github.com/payplat/platform/services/pool/domain"
)

// factOf turns a decoded, validated input event into the pool it concerns and the fact to
// record: treasury.deposit_detected → DEPOSIT, treasury.withdrawal_completed → WITHDRAWAL,
// treasury.refund_completed → CREDIT, payment.confirmed → DEBIT. Its errors are permanent:
// the message can never be recorded.
func factOf(msg proto.Message) (domain.ID, domain.Fact, error) {
	meta := events.Meta(msg)
	id, err := domain.NewID(meta.GetCompanyId(), meta.GetEnvironment())
	if err != nil {
		return domain.ID{}, domain.Fact{}, err
	}
	cause := domain.Cause{EventID: meta.GetEventId(), CorrelationID: meta.GetCorrelationId()}
	var f domain.Fact
	switch m := msg.(type) {
	case *treasuryv1.TreasuryDepositDetected:
		f = domain.Fact{Type: domain.Deposit, Key: domain.DepositKey(m.GetTxHash()), TxHash: m.GetTxHash()}
		err = parseInto(&f, m.GetAmount(), m.GetDetectedAt())
	case *treasuryv1.TreasuryWithdrawalCompleted:
		f = domain.Fact{Type: domain.Withdrawal, Key: domain.WithdrawalKey(m.GetWithdrawalId()),
			TxHash: m.GetTxHash(), WithdrawalID: m.GetWithdrawalId(), ToAddress: m.GetToAddress()}
		err = parseInto(&f, m.GetAmount(), m.GetCompletedAt())
	case *treasuryv1.TreasuryRefundCompleted:
		f = domain.Fact{Type: domain.Credit, Key: domain.CreditKey(m.GetPaymentId()), TxHash: m.GetTxHash(),
			Payment: &domain.PaymentRef{PaymentID: m.GetPaymentId(), MerchantID: m.GetMerchantId()}}
		err = parseInto(&f, m.GetAmount(), m.GetCompletedAt())
	case *paymentv1.PaymentConfirmed:
		f = domain.Fact{Type: domain.Debit, Key: domain.DebitKey(m.GetPaymentId()), TxHash: m.GetTxHash(),
			Payment: &domain.PaymentRef{PaymentID: m.GetPaymentId(), MerchantID: m.GetMerchantId()}}
		err = parseInto(&f, m.GetAmount(), m.GetConfirmedAt())
	default:
		err = fmt.Errorf("%T is not an input of the pool", msg)
	}
	if err != nil {
		return domain.ID{}, domain.Fact{}, err
	}
	f.Cause = cause
	if f.Payment != nil {
		f.Payment.Amount = f.Amount
	}
	return id, f, nil
}

func parseInto(f *domain.Fact, amount, at string) error {
	a, err := money.Parse(amount)
	if err != nil {
		return fmt.Errorf("%w: amount %q: %w", domain.ErrInvalidAmount, amount, err)
	}
	if !a.IsPositive() {
		return fmt.Errorf("%w: amount %s must be greater than zero", domain.ErrInvalidAmount, a)
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return fmt.Errorf("time %q: %w", at, err)
	}
	f.Amount, f.ConfirmedAt = a, t.UTC()
	return nil
}
