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
	"github.com/payplat/platform/pkg/validation"
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

// LedgerStore is what the ledger consumer needs of the repository: updates of one or many
// merchants inside the consumer's transaction and the de-duplication lookups.
type LedgerStore interface {
	UpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, scope app.Scope,
		decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error)
	HasEntry(ctx context.Context, tx pgx.Tx, id uuid.UUID, sourceKey string) (bool, error)
	LockMerchants(ctx context.Context, tx pgx.Tx, ids ...uuid.UUID) error
	UpdateManyTx(ctx context.Context, tx pgx.Tx, order []uuid.UUID, scopes map[uuid.UUID]app.Scope,
		decide func(map[uuid.UUID]*domain.Merchant) (map[uuid.UUID][]domain.Event, error)) error
	ExistingEntriesMany(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, sourceKeys []string) (map[uuid.UUID]map[string]bool, error)
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

// Lock implements projection.Locker: the streams of the merchants a batch concerns are locked
// before the runner's first write of the transaction. Events that name no valid merchant lock
// nothing (they fail in Apply).
func (p *LedgerProjector) Lock(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	var ids []uuid.UUID
	for _, ev := range evs {
		if id, _, err := entryOf(ev); err == nil {
			ids = append(ids, id)
		}
	}
	return p.store.LockMerchants(ctx, tx, ids...)
}

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
	var invalid *validation.Error
	if errors.Is(err, domain.ErrNotFound) || errors.As(err, &invalid) {
		return fmt.Errorf("%w: %s %s for merchant %s: %v", projection.ErrPermanent, ev.Type, ev.ID, merchantID, err)
	}
	return err
}

// ApplyBatch implements projection.BatchProjector: the whole batch is decided together. The
// merchants it concerns are locked with one query, the de-duplication is one query, each
// merchant's entries are one append (the balance chaining through them in batch order), and
// the read tables take one INSERT and one UPDATE for the batch. Any event the batch cannot
// take (an unknown merchant, another tenant, an invalid amount) makes the whole batch
// permanent-failed, and the runner then applies its events one by one, so that only that event
// goes to dead letter.
func (p *LedgerProjector) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	type item struct {
		entry domain.NewEntry
		key   string
	}
	var (
		order  []uuid.UUID
		groups = map[uuid.UUID][]item{}
		scopes = map[uuid.UUID]app.Scope{}
		traces = make(map[uuid.UUID]adapters.Trace, len(evs))
		// the (merchant, source key) pairs of the batch, for the de-duplication query
		keyIDs  = make([]uuid.UUID, 0, len(evs))
		keyKeys = make([]string, 0, len(evs))
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
		key := domain.SourceKey(entry.Type, entry.PaymentID, entry.TxHash)
		groups[merchantID] = append(groups[merchantID], item{entry: entry, key: key})
		keyIDs, keyKeys = append(keyIDs, merchantID), append(keyKeys, key)
		corr := meta.GetCorrelationId()
		if corr == "" {
			corr = ev.ID.String()
		}
		traces[entry.ID] = adapters.Trace{CorrelationID: corr, CausationID: ev.ID.String()}
	}
	ctx = adapters.WithEntryTraces(ctx, traces)
	now := p.now().Truncate(time.Microsecond)
	err := p.store.UpdateManyTx(ctx, tx, order, scopes, func(ms map[uuid.UUID]*domain.Merchant) (map[uuid.UUID][]domain.Event, error) {
		// Under the row locks of every merchant of the batch.
		seen, err := p.store.ExistingEntriesMany(ctx, tx, keyIDs, keyKeys)
		if err != nil {
			return nil, err
		}
		out := make(map[uuid.UUID][]domain.Event, len(order))
		for _, merchantID := range order {
			var fresh []domain.NewEntry
			had := seen[merchantID]
			if had == nil {
				had = map[string]bool{}
			}
			for _, it := range groups[merchantID] {
				if had[it.key] {
					continue
				}
				had[it.key] = true // the same fact twice in one batch is one entry
				fresh = append(fresh, it.entry)
			}
			recs, err := ms[merchantID].RecordEntries(fresh, now)
			if err != nil {
				return nil, fmt.Errorf("merchant %s: %w", merchantID, err)
			}
			evs := make([]domain.Event, len(recs))
			for i, rec := range recs {
				evs[i] = rec
			}
			out[merchantID] = evs
		}
		return out, nil
	})
	var invalid *validation.Error
	if errors.Is(err, domain.ErrNotFound) || errors.As(err, &invalid) {
		return fmt.Errorf("%w: %v", projection.ErrPermanent, err)
	}
	return err
}

// entryOf maps a bus event to the merchant it concerns and the entry to record. The entry id
// derives from the event id, so that a replay decides the same entry.
func entryOf(ev projection.Event) (uuid.UUID, domain.NewEntry, error) {
	e := domain.NewEntry{ID: uuid.NewSHA1(ev.ID, []byte("merchant-ledger"))}
	var merchantID, amount string
	switch m := ev.Msg.(type) {
	case *paymentv1.PaymentConfirmed:
		merchantID, amount = m.GetMerchantId(), m.GetAmount()
		e.Type, e.PaymentID, e.TxHash = domain.EntryPayment, m.GetPaymentId(), m.GetTxHash()
		e.Description = "Payment " + m.GetPaymentId() + " confirmed"
	case *merchantwalletv1.MerchantWalletDepositDetected:
		merchantID, amount = m.GetMerchantId(), m.GetAmount()
		e.Type, e.TxHash = domain.EntryDeposit, m.GetTxHash()
		e.Description = "Deposit to " + m.GetWalletAddress()
	case *merchantwalletv1.MerchantWalletWithdrawalCompleted:
		merchantID, amount = m.GetMerchantId(), m.GetAmount()
		e.Type, e.TxHash = domain.EntryWithdrawal, m.GetTxHash()
		e.Description = "Withdrawal " + m.GetWithdrawalId() + " to " + m.GetToAddress()
	default:
		return uuid.Nil, domain.NewEntry{}, fmt.Errorf("not a ledger event: %T", ev.Msg)
	}
	a, err := money.Parse(amount)
	id, idErr := uuid.Parse(merchantID)
	if err = errors.Join(err, idErr); err != nil {
		return uuid.Nil, domain.NewEntry{}, err
	}
	if e.Type == domain.EntryWithdrawal {
		// A withdrawal's event carries the amount that left; the ledger records it negative.
		if a, err = a.Neg(); err != nil {
			return uuid.Nil, domain.NewEntry{}, err
		}
	}
	e.Amount = a
	return id, e, nil
}
