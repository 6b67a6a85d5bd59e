package ports

import (
	"fmt"
	"time"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// factOf turns a decoded payment event into a fact: the one step from the bus to the domain. Events are validated by the runner before
// they get here; anything still unusable is projection.ErrPermanent (dead-lettered).
func factOf(ev projection.Event) (domain.Fact, error) {
	meta := events.Meta(ev.Msg)
	// Times are kept to the microsecond, the precision of timestamptz and of payments.facts, so
	// that a fact folds the same whether it was just decoded or read back.
	f := domain.Fact{EventID: ev.ID, OccurredAt: ev.OccurredAt.Truncate(time.Microsecond).UTC(),
		Key: domain.Key{CompanyID: meta.GetCompanyId(), Environment: meta.GetEnvironment()}}
	var (
		amount string
		err    error
	)
	switch m := ev.Msg.(type) {
	case *paymentv1.PaymentCreated:
		f.Status, f.PaymentID, f.MerchantID, f.MerchantWallet = domain.StatusCreated, m.GetPaymentId(), m.GetMerchantId(), m.GetMerchantWallet()
		amount = m.GetAmount()
		if f.CreatedAt, err = parseTime("created_at", m.GetCreatedAt()); err == nil {
			f.ExpiresAt, err = parseTime("expires_at", m.GetExpiresAt())
		}
	case *paymentv1.PaymentProcessing:
		f.Status, f.PaymentID, f.MerchantID, f.MerchantWallet = domain.StatusProcessing, m.GetPaymentId(), m.GetMerchantId(), m.GetMerchantWallet()
		f.CustomerWallet, f.TxHash, amount = m.GetCustomerWallet(), m.GetTxHash(), m.GetAmount()
	case *paymentv1.PaymentConfirmed:
		f.Status, f.PaymentID, f.MerchantID, f.MerchantWallet = domain.StatusConfirmed, m.GetPaymentId(), m.GetMerchantId(), m.GetMerchantWallet()
		f.CustomerWallet, f.TxHash, f.BlockExplorerURL, amount = m.GetCustomerWallet(), m.GetTxHash(), m.GetBlockExplorerUrl(), m.GetAmount()
		f.ConfirmedAt, err = parseTime("confirmed_at", m.GetConfirmedAt())
	case *paymentv1.PaymentFailed:
		f.Status, f.PaymentID, f.MerchantID = domain.StatusFailed, m.GetPaymentId(), m.GetMerchantId()
		f.TxHash, f.ErrorMessage, amount = m.GetTxHash(), m.GetErrorMessage(), m.GetAmount()
	case *paymentv1.PaymentExpired:
		f.Status, f.PaymentID, f.MerchantID, amount = domain.StatusExpired, m.GetPaymentId(), m.GetMerchantId(), m.GetAmount()
		f.ExpiredAt, err = parseTime("expired_at", m.GetExpiredAt())
	default:
		return f, fmt.Errorf("%w: %s is not a payment event", projection.ErrPermanent, ev.Type)
	}
	if err != nil {
		return f, err
	}
	a, err := money.Parse(amount)
	if err != nil {
		return f, fmt.Errorf("%w: amount: %v", projection.ErrPermanent, err)
	}
	f.AmountMicros = a.Micros()
	return f, nil
}

func parseTime(field, v string) (*time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", projection.ErrPermanent, field, err)
	}
	t = t.Truncate(time.Microsecond).UTC()
	return &t, nil
}
