package adapters

import (
	"context"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// NewFactLoader returns the bulk loader of a rebuild, keeping the facts of at most openPayments
// payments in memory (0: 50,000). A rebuild reads the stream from its first message into
// empty tables, so nothing needs looking up: the facts of the payments seen lately
// are kept in memory until the payment has been quiet for a while (a live payment's events are
// minutes apart, a rebuild reads hours of them in seconds), then folded with domain.Fold, as
// SavePayments does, and COPYed as the payment's row with its facts. A payment whose row was
// written before one of its facts arrived has two rows at the end: those are merged and folded
// again from all their facts.
func NewFactLoader(openPayments int) *FactLoader {
	if openPayments <= 0 {
		openPayments = defaultOpenPayments
	}
	return &FactLoader{open: map[domain.Key]*openPayment{}, maxOpen: openPayments}
}

// defaultOpenPayments bounds the payments whose facts a loader keeps in memory (about 2 KB
// each).
const defaultOpenPayments = 50_000

// FactLoader writes a rebuild's payments from their facts (NewFactLoader).
type FactLoader struct {
	maxOpen int
	open    map[domain.Key]*openPayment
	// lru lists the payments by last fact, oldest first from head; an entry whose payment has
	// had a fact since is stale.
	lru  []lruEntry
	head int
	seq  uint64
	// written remembers the payments whose row was written before the end; a fact of one of
	// them (reopened) means a payment with two rows, which Finish then looks for.
	written  writtenSet
	reopened bool
}

type openPayment struct {
	facts []domain.Fact // never empty while the payment is open
	last  uint64
}

type lruEntry struct {
	p   *openPayment
	seq uint64
}

// writtenSet is a blocked Bloom filter of payment keys: a bounded 16 MiB whatever the number of
// payments, no false negatives, and one cache line read per lookup (the key's four bits are in
// one 512-bit block). At a million payments written it answers yes wrongly about once in a
// million lookups (at ten million, once in a few hundred). A false positive costs Finish a scan
// of the table it would otherwise skip, never a wrong row.
type writtenSet struct {
	seed   maphash.Seed
	blocks [][8]uint64
}

const writtenBlocks = 1 << 18 // of 512 bits: 16 MiB

// bits returns the key's block and the four bits it sets there.
func (w *writtenSet) bits(k domain.Key) (*[8]uint64, [4]uint16) {
	var h maphash.Hash
	h.SetSeed(w.seed)
	h.WriteString(k.CompanyID)
	h.WriteByte(0)
	h.WriteString(k.Environment)
	h.WriteByte(0)
	h.WriteString(k.PaymentID)
	sum := h.Sum64()
	block := &w.blocks[sum&(writtenBlocks-1)]
	sum >>= 18
	var bits [4]uint16
	for i := range bits {
		bits[i] = uint16(sum & 511)
		sum >>= 9
	}
	return block, bits
}

func (w *writtenSet) add(k domain.Key) {
	if w.blocks == nil {
		w.seed, w.blocks = maphash.MakeSeed(), make([][8]uint64, writtenBlocks)
	}
	block, bits := w.bits(k)
	for _, b := range bits {
		block[b/64] |= 1 << (b % 64)
	}
}

func (w *writtenSet) mayHave(k domain.Key) bool {
	if w.blocks == nil {
		return false
	}
	block, bits := w.bits(k)
	for _, b := range bits {
		if block[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// Load takes the facts of a batch of the stream, in stream order, and writes the payments that
// have been quiet the longest once more than the loader's bound are open.
func (l *FactLoader) Load(ctx context.Context, tx pgx.Tx, facts []domain.Fact) error {
	for _, f := range facts {
		l.seq++
		p := l.open[f.Key]
		if p == nil {
			// Most payments have three facts or fewer: one allocation for them.
			p = &openPayment{facts: make([]domain.Fact, 0, 4)}
			l.open[f.Key] = p
			if !l.reopened && l.written.mayHave(f.Key) {
				l.reopened = true
			}
		}
		p.facts, p.last = append(p.facts, f), l.seq
		l.lru = append(l.lru, lruEntry{p: p, seq: l.seq})
	}
	var rows [][]domain.Fact
	for len(l.open) > l.maxOpen {
		e := l.lru[l.head]
		l.head++
		if p := e.p; p.last == e.seq {
			k := p.facts[0].Key
			rows = append(rows, p.facts)
			delete(l.open, k)
			l.written.add(k)
			p.facts = nil // stale lru entries may still point to p
		}
	}
	if l.head > len(l.lru)/2 {
		l.lru, l.head = append(l.lru[:0:0], l.lru[l.head:]...), 0
	}
	return copyPayments(ctx, tx, rows)
}

// Finish writes the payments still in memory, then folds
// again those that got a fact after their row was written.
func (l *FactLoader) Finish(ctx context.Context, tx pgx.Tx) error {
	rows := make([][]domain.Fact, 0, len(l.open))
	for _, p := range l.open {
		rows = append(rows, p.facts)
	}
	if err := copyPayments(ctx, tx, rows); err != nil {
		return err
	}
	l.open, l.lru, l.written = nil, nil, writtenSet{}
	if !l.reopened {
		return nil
	}
	for {
		split, err := splitPayments(ctx, tx, 10_000)
		if err != nil || len(split) == 0 {
			return err
		}
		rows := make([][]domain.Fact, 0, len(split))
		for _, facts := range split {
			rows = append(rows, facts)
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

// copyPayments writes the rows of payments with these facts (one []domain.Fact per payment),
// folding each when COPY asks for it: pgx builds the rows in a goroutine of its own while the
// connection sends the ones before, so the folding overlaps with the sending and the server's
// inserting instead of coming before them.
func copyPayments(ctx context.Context, tx pgx.Tx, payments [][]domain.Fact) error {
	if len(payments) == 0 {
		return nil
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"payments"}, paymentColumns, &copySource{payments: payments, next: -1}); err != nil {
		return fmt.Errorf("writing payments: %w", err)
	}
	return nil
}

// appendRow appends to dst the values of the row ApplyBatch leaves for a payment with these
// facts, in the order of paymentColumns: the fold, updated_at the latest of its times (GREATEST
// in updatePayments), and expiry_published_at its deadline if it expired. ApplyBatch sets
// expiry_published_at whenever the fold it writes is EXPIRED and keeps it afterwards, so a
// payment that expired and then saw a later on-chain event keeps it too; this is what the live
// consumer writes when the two events come in separate batches (a live payment's events are
// minutes apart), the only case where the answer depends on batching.
func appendRow(dst []any, facts []domain.Fact) ([]any, error) {
	p, blob, err := foldAndEncode(facts)
	if err != nil {
		return dst, err
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
	return append(dst, p.CompanyID, p.Environment, p.PaymentID, p.Status, p.HasCreated, p.MerchantID,
		p.MerchantWallet, p.CustomerWallet, p.AmountMicros, p.TxHash, p.BlockExplorerURL, p.ErrorMessage,
		p.CreatedAt, p.ExpiresAt, p.ConfirmedAt, p.ExpiredAt, updated, published, blob), nil
}

// copySource folds one payment per row, into one slice of values reused from row to row (COPY
// encodes a row before asking for the next).
type copySource struct {
	payments [][]domain.Fact
	next     int
	values   []any
	err      error
}

func (c *copySource) Next() bool {
	c.next++
	if c.next >= len(c.payments) {
		return false
	}
	c.values, c.err = appendRow(c.values[:0], c.payments[c.next])
	return c.err == nil
}

func (c *copySource) Values() ([]any, error) { return c.values, nil }

func (c *copySource) Err() error { return c.err }
