package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// prober measures recovery: the time from a fault's end until a payment published then is fully
// projected (payments row CONFIRMED, pool DEBIT, merchant ledger PAYMENT).
type prober struct {
	load *Load
	db   *pgxpool.Pool
}

func (p prober) probe(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	t := p.load.tenants[0]
	m := t.Merchants[0]
	lc := &Lifecycle{Tenant: 0, MerchantID: m.ID, PaymentID: uuid.NewString(), Micros: 10_000}
	p.load.book.addLifecycle(lc)
	amount := money.FromMicros(lc.Micros).String()
	tx := fmt.Sprintf("0x%064x", time.Now().UnixNano())
	steps := []struct {
		status string
		ev     proto.Message
	}{
		{"CREATED", &paymentv1.PaymentCreated{Meta: p.load.meta(t, lc.PaymentID), PaymentId: lc.PaymentID, MerchantId: m.ID,
			MerchantWallet: m.Wallet, Amount: amount, Status: "PENDING", ExpiresAt: events.FormatTime(start.Add(time.Hour)),
			CreatedAt: events.FormatTime(start)}},
		{"PROCESSING", &paymentv1.PaymentProcessing{Meta: p.load.meta(t, lc.PaymentID), PaymentId: lc.PaymentID,
			MerchantId: m.ID, MerchantWallet: m.Wallet, CustomerWallet: "0x" + fmt.Sprintf("%040x", 1), Amount: amount,
			TxHash: tx, Status: "PROCESSING"}},
		{"CONFIRMED", p.load.confirmed(t, m, lc, amount, "0x"+fmt.Sprintf("%040x", 1), tx)},
	}
	for _, s := range steps {
		if err := p.load.pub.Publish(ctx, s.ev); err != nil {
			return 0, err
		}
		p.load.book.ack(lc, s.status)
	}
	for {
		var done bool
		err := p.db.QueryRow(ctx, `SELECT
              EXISTS (SELECT 1 FROM payments.payments WHERE payment_id = $1 AND status = 'CONFIRMED')
          AND EXISTS (SELECT 1 FROM pool.movements WHERE payment_id = $1 AND type = 'DEBIT')
          AND EXISTS (SELECT 1 FROM merchant.merchant_ledger WHERE payment_id = $1 AND type = 'PAYMENT')`,
			lc.PaymentID).Scan(&done)
		if err == nil && done {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("probe payment %s not projected after %s: %w (last error %v)", lc.PaymentID,
				time.Since(start).Round(time.Millisecond), ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
