package ports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain"
)

// The durable consumers of the merchant ledger, created up front.
var (
	PaymentsConsumer = bus.ConsumerSpec{Stream: "PAYMENTS", Durable: "merchant-ledger-payments",
		FilterSubjects: []string{"payment.*.*.confirmed"}}
	WalletsConsumer = bus.ConsumerSpec{Stream: "MERCHANT_WALLETS", Durable: "merchant-ledger-wallets",
		FilterSubjects: []string{"merchant_wallet.*.*.deposit_detected", "merchant_wallet.*.*.withdrawal_completed"}}
)

// LedgerStore is what the ledger consumer needs of the repository: an update inside the
// consumer's transaction and the de-duplication lookup.
type LedgerStore interface {
	UpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, scope app.Scope,
		decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error)
	HasEntry(ctx context.Context, tx pgx.Tx, id uuid.UUID, sourceKey string) (bool, error)
	ExistingEntries(ctx context.Context, tx pgx.Tx, id uuid.UUID, sourceKeys []string) (map[string]bool, error)
}

// LedgerProjector turns payment.confirmed (PAYMENT, +amount) and merchant_wallet deposits and
// withdrawals (DEPOSIT, WITHDRAWAL −amount) into ledger entries appended to the merchant's
// stream. It runs under projection.StreamRunner, which skips a redelivered event id; the
// entry's source key (payment id, transaction hash), checked under the merchant's row lock
// and unique in the ledger table, makes a republished fact with a new event id one entry too.
// An event for an unknown merchant, or for a merchant of another company or environment, is
// permanent: it goes to the dead-letter stream.
type LedgerProjector struct {
	name  string
	store LedgerStore
	now   func() time.Time
}

// NewLedgerProjector returns the projector called name (its de-duplication namespace).
func NewLedgerProjector(name string, store LedgerStore) *LedgerProjector {
	return &LedgerProjector{name: name, store: store, now: time.Now}
}

// Name implements projection.Projector.
func (p *LedgerProjector) Name() string { return p.name }

// Apply implements projection.Projector.
func (p *LedgerProjector) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	merchantID, entry, err := entryOf(ev)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", projection.ErrPermanent, ev.Type, ev.ID, err)
	}
	meta := events.Meta(ev.Msg)
	corr := meta.GetCorrelationId()
	if corr == "" {
		corr = ev.ID.String()
	}
	ctx = adapters.WithTrace(ctx, adapters.Trace{CorrelationID: corr, CausationID: ev.ID.String()})
	scope := app.Scope{CompanyID: meta.GetCompanyId(), Environment: meta.GetEnvironment()}
	key := domain.SourceKey(entry.Type, entry.PaymentID, entry.TxHash)
	_, err = p.store.UpdateTx(ctx, tx, merchantID, scope, func(m *domain.Merchant) ([]domain.Event, error) {
		seen, err := p.store.HasEntry(ctx, tx, merchantID, key)
		if err != nil || seen {
			return nil, err
		}
		rec, err := m.RecordEntry(entry, p.now().Truncate(time.Microsecond))
		if err != nil {
			return nil, err
		}
		return []domain.Event{rec}, nil
	})
	var invalid *domain.ValidationError
	if errors.Is(err, domain.ErrNotFound) || errors.As(err, &invalid) {
		return fmt.Errorf("%w: %s %s for merchant %s: %v", projection.ErrPermanent, ev.Type, ev.ID, merchantID, err)
	}
	return err
}

// ApplyBatch implements projection.BatchProjector: the entries a batch brings for one merchant
// are decided together, under one row lock, with one de-duplication query and one append, the
// balance chaining through them in batch order. Any event the batch cannot take (an unknown
// merchant, another tenant, an invalid amount) makes the whole batch permanent-failed, and the
// runner then applies its events one by one, so that only that event goes to dead letter.
func (p *LedgerProjector) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	type item struct {
		entry domain.NewEntry
		key   string
	}
	var (
		order  []uuid.UUID
		groups = map[uuid.UUID][]item{}
		scopes = map[uuid.UUID]app.Scope{}
		traces = map[uuid.UUID]adapters.Trace{}
	)
	for _, ev := range evs {
		merchantID, entry, err := entryOf(ev)
		if err != nil {
			return fmt.Errorf("%w: %s %s: %v", projection.ErrPermanent, ev.Type, ev.ID, err)
		}
		meta := events.Meta(ev.Msg)
		scope := app.Scope{CompanyID: meta.GetCompanyId(), Environment: meta.GetEnvironment()}
		if s, ok := scopes[merchantID]; ok && s != scope {
			return fmt.Errorf("%w: %s %s: merchant %s in two scopes", projection.ErrPermanent, ev.Type, ev.ID, merchantID)
		}
		if _, ok := groups[merchantID]; !ok {
			order = append(order, merchantID)
		}
		scopes[merchantID] = scope
		groups[merchantID] = append(groups[merchantID], item{entry: entry,
			key: domain.SourceKey(entry.Type, entry.PaymentID, entry.TxHash)})
		corr := meta.GetCorrelationId()
		if corr == "" {
			corr = ev.ID.String()
		}
		traces[entry.ID] = adapters.Trace{CorrelationID: corr, CausationID: ev.ID.String()}
	}
	ctx = adapters.WithEntryTraces(ctx, traces)
	for _, merchantID := range order {
		items := groups[merchantID]
		_, err := p.store.UpdateTx(ctx, tx, merchantID, scopes[merchantID], func(m *domain.Merchant) ([]domain.Event, error) {
			keys := make([]string, len(items))
			for i, it := range items {
				keys[i] = it.key
			}
			seen, err := p.store.ExistingEntries(ctx, tx, merchantID, keys)
			if err != nil {
				return nil, err
			}
			var fresh []domain.NewEntry
			for _, it := range items {
				if seen[it.key] {
					continue
				}
				seen[it.key] = true // the same fact twice in one batch is one entry
				fresh = append(fresh, it.entry)
			}
			recs, err := m.RecordEntries(fresh, p.now().Truncate(time.Microsecond))
			if err != nil {
				return nil, err
			}
			out := make([]domain.Event, len(recs))
			for i, rec := range recs {
				out[i] = rec
			}
			return out, nil
		})
		var invalid *domain.ValidationError
		if errors.Is(err, domain.ErrNotFound) || errors.As(err, &invalid) {
			return fmt.Errorf("%w: merchant %s: %v", projection.ErrPermanent, merchantID, err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// entryOf maps a bus event to the merchant it concerns and the entry to record. The entry id
// derives from the event id, so that a replay decides the same entry.
func entryOf(ev projection.Event) (uuid.UUID, domain.NewEntry, error) {
	entryID := uuid.NewSHA1(ev.ID, []byte("merchant-ledger"))
	switch m := ev.Msg.(type) {
	case *paymentv1.PaymentConfirmed:
		amount, err := money.Parse(m.GetAmount())
		id, idErr := uuid.Parse(m.GetMerchantId())
		if err = errors.Join(err, idErr); err != nil {
			return uuid.Nil, domain.NewEntry{}, err
		}
		return id, domain.NewEntry{ID: entryID, Type: domain.EntryPayment, Amount: amount, PaymentID: m.GetPaymentId(),
			TxHash: m.GetTxHash(), Description: "Payment " + m.GetPaymentId() + " confirmed"}, nil
	case *merchantwalletv1.MerchantWalletDepositDetected:
		amount, err := money.Parse(m.GetAmount())
		id, idErr := uuid.Parse(m.GetMerchantId())
		if err = errors.Join(err, idErr); err != nil {
			return uuid.Nil, domain.NewEntry{}, err
		}
		return id, domain.NewEntry{ID: entryID, Type: domain.EntryDeposit, Amount: amount, TxHash: m.GetTxHash(),
			Description: "Deposit to " + m.GetWalletAddress()}, nil
	case *merchantwalletv1.MerchantWalletWithdrawalCompleted:
		amount, err := money.Parse(m.GetAmount())
		id, idErr := uuid.Parse(m.GetMerchantId())
		if err = errors.Join(err, idErr); err != nil {
			return uuid.Nil, domain.NewEntry{}, err
		}
		neg, err := amount.Neg()
		if err != nil {
			return uuid.Nil, domain.NewEntry{}, err
		}
		return id, domain.NewEntry{ID: entryID, Type: domain.EntryWithdrawal, Amount: neg, TxHash: m.GetTxHash(),
			Description: "Withdrawal " + m.GetWithdrawalId() + " to " + m.GetToAddress()}, nil
	default:
		return uuid.Nil, domain.NewEntry{}, fmt.Errorf("not a ledger event: %T", ev.Msg)
	}
}
