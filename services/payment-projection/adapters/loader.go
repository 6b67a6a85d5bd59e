package adapters

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// NewLoader implements projection.BulkProjector. A rebuild reads the stream from its first
// message into empty tables, so nothing needs looking up: the facts of the payments seen lately
// are kept in memory until the payment has been quiet for a while (a live payment's events are
// minutes apart, a rebuild reads hours of them in seconds), then folded with domain.Fold, as
// ApplyBatch does, and COPYed as the payment's row with its facts. A payment whose row was
// written before one of its facts arrived has two rows at the end: those are merged and folded
// again from all their facts.
func (p *Projector) NewLoader() projection.BulkLoader {
	maxOpen := p.OpenPayments
	if maxOpen <= 0 {
		maxOpen = defaultOpenPayments
	}
	return &factLoader{open: map[domain.Key]*openPayment{}, maxOpen: maxOpen}
}

// defaultOpenPayments bounds the payments whose facts a loader keeps in memory (about 2 KB
// each).
const defaultOpenPayments = 50_000

type factLoader struct {
	maxOpen int
	open    map[domain.Key]*openPayment
	// lru lists the payments by last fact, oldest first from head; an entry whose payment has
	// had a fact since is stale.
	lru     []lruEntry
	head    int
	seq     uint64
	evicted bool // a row was written before the end: Finish looks for payments with two
}

type openPayment struct {
	facts []domain.Fact
	last  uint64
}

type lruEntry struct {
	key domain.Key
	seq uint64
}

// Load implements projection.BulkLoader. An event refused as permanent fails it before any
// change to the loader's state.
func (l *factLoader) Load(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	facts := make([]domain.Fact, len(evs))
	for i, ev := range evs {
		f, err := factOf(ev)
		if err != nil {
			return fmt.Errorf("event %s: %w", ev.ID, err)
		}
		facts[i] = f
	}
	for _, f := range facts {
		l.seq++
		p := l.open[f.Key]
		if p == nil {
			p = &openPayment{}
			l.open[f.Key] = p
		}
		p.facts, p.last = append(p.facts, f), l.seq
		l.lru = append(l.lru, lruEntry{key: f.Key, seq: l.seq})
	}
	var rows [][]any
	for len(l.open) > l.maxOpen {
		e := l.lru[l.head]
		l.head++
		if p := l.open[e.key]; p != nil && p.last == e.seq {
			row, err := paymentRow(p.facts)
			if err != nil {
				return err
			}
			rows = append(rows, row)
			delete(l.open, e.key)
			l.evicted = true
		}
	}
	if l.head > len(l.lru)/2 {
		l.lru, l.head = append(l.lru[:0:0], l.lru[l.head:]...), 0
	}
	return copyPayments(ctx, tx, rows)
}

// Finish implements projection.BulkLoader: it writes the payments still in memory, then folds
// again those that got a fact after their row was written.
func (l *factLoader) Finish(ctx context.Context, tx pgx.Tx) error {
	rows := make([][]any, 0, len(l.open))
	for _, p := range l.open {
		row, err := paymentRow(p.facts)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	if err := copyPayments(ctx, tx, rows); err != nil {
		return err
	}
	l.open, l.lru = nil, nil
	if !l.evicted {
		return nil
	}
	for {
		split, err := splitPayments(ctx, tx, 10_000)
		if err != nil || len(split) == 0 {
			return err
		}
		rows := make([][]any, 0, len(split))
		for _, facts := range split {
			row, err := paymentRow(facts)
			if err != nil {
				return err
			}
			rows = append(rows, row)
		}
		if err := copyPayments(ctx, tx, rows); err != nil {
			return err
		}
	}
}

// splitPayments deletes the rows of up to limit payments that have more than one, and returns
// the facts of each such payment, all its rows' together.
func splitPayments(ctx context.Context, tx pgx.Tx, limit int) (map[domain.Key][]domain.Fact, error) {
	rows, err := tx.Query(ctx, `WITH split AS (
            SELECT company_id, environment, payment_id FROM payments
            GROUP BY company_id, environment, payment_id HAVING count(*) > 1 LIMIT $1)
        DELETE FROM payments p USING split s
        WHERE p.company_id = s.company_id AND p.environment = s.environment AND p.payment_id = s.payment_id
        RETURNING p.company_id, p.environment, p.payment_id, p.facts`, limit)
	if err != nil {
		return nil, fmt.Errorf("finding payments folded twice: %w", err)
	}
	out := map[domain.Key][]domain.Fact{}
	var (
		k    domain.Key
		blob []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&k.CompanyID, &k.Environment, &k.PaymentID, &blob}, func() error {
		fs, err := DecodeFacts(k, blob)
		out[k] = append(out[k], fs...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("finding payments folded twice: %w", err)
	}
	return out, nil
}

var paymentColumns = []string{"company_id", "environment", "payment_id", "status", "has_created", "merchant_id",
	"merchant_wallet", "customer_wallet", "amount_micros", "tx_hash", "block_explorer_url", "error_message",
	"created_at", "expires_at", "confirmed_at", "expired_at", "updated_at", "expiry_published_at", "facts"}

func copyPayments(ctx context.Context, tx pgx.Tx, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"payments"}, paymentColumns, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("writing payments: %w", err)
	}
	return nil
}

// paymentRow is the row ApplyBatch leaves for a payment with these facts: the fold, updated_at
// the latest of its times (GREATEST in updatePayments), and expiry_published_at its deadline if
// it expired. ApplyBatch sets expiry_published_at whenever the fold it writes is EXPIRED and
// keeps it afterwards, so a payment that expired and then saw a later on-chain event keeps it
// too; this is what the live consumer writes when the two events come in separate batches (a
// live payment's events are minutes apart), the only case where the answer depends on batching.
func paymentRow(facts []domain.Fact) ([]any, error) {
	p, blob, err := foldAndEncode(facts)
	if err != nil {
		return nil, err
	}
	updated := p.CreatedAt
	for _, t := range []*time.Time{p.ConfirmedAt, p.ExpiredAt} {
		if t != nil && t.After(updated) {
			updated = *t
		}
	}
	var published *time.Time
	for _, f := range facts {
		if f.Status == domain.StatusExpired {
			published = p.ExpiresAt
			break
		}
	}
	return []any{p.CompanyID, p.Environment, p.PaymentID, p.Status, p.HasCreated, p.MerchantID,
		p.MerchantWallet, p.CustomerWallet, p.AmountMicros, p.TxHash, p.BlockExplorerURL, p.ErrorMessage,
		p.CreatedAt, p.ExpiresAt, p.ConfirmedAt, p.ExpiredAt, updated, published, blob}, nil
}

var _ projection.BulkProjector = (*Projector)(nil)
