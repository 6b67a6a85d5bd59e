// Package adapters holds the pool service's PostgreSQL side: the repository that loads a pool
// and saves its changes (events and read tables in one transaction), the read queries, the
// read model that rebuilds the read tables from the events, and the look-ups of merchant names
// and known companies.
package adapters

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"

	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/app"
	"github.com/payplat/platform/services/pool/domain"
)

// Repository loads pools and saves their changes: the events appended to the event store with
// the version the pool was loaded at, and the read tables (balances, movements) updated in the
// same transaction.
//
// Writers of one pool are serialised by a row lock on its balances row, taken before the pool
// is read, so concurrent writers (several instances, the command and the consumers) queue
// instead of failing with a version conflict; the expected version of the append still
// guards the chain against any writer that would bypass the lock.
type Repository struct {
	db        *pgxpool.Pool
	store     *eventstore.Store
	merchants *MerchantDirectory
	now       func() time.Time
}

var _ app.Repository = (*Repository)(nil)

// NewRepository returns the repository on db (search_path pool).
func NewRepository(db *pgxpool.Pool) *Repository {
	return &Repository{db: db, store: eventstore.New(db), merchants: NewMerchantDirectory(), now: time.Now}
}

// DB returns the repository's pool.
func (r *Repository) DB() *pgxpool.Pool { return r.db }

// loaded is a pool locked for the transaction, with the read-table counters save continues.
type loaded struct {
	pool          *domain.Pool
	movementCount int64
}

// lock takes the row lock of the pool's snapshot (creating the row on the pool's first write)
// and rebuilds the pool from it.
func (r *Repository) lock(ctx context.Context, tx pgx.Tx, id domain.ID) (*loaded, error) {
	l, err := r.selectForUpdate(ctx, tx, id)
	if !errors.Is(err, pgx.ErrNoRows) {
		return l, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO balances (company_id, environment, low_threshold)
        VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, id.CompanyID, id.Environment,
		domain.DefaultLowThreshold.Micros()); err != nil {
		return nil, fmt.Errorf("creating pool %s: %w", id.StreamID(), err)
	}
	return r.selectForUpdate(ctx, tx, id)
}

func (r *Repository) selectForUpdate(ctx context.Context, tx pgx.Tx, id domain.ID) (*loaded, error) {
	var (
		balance, threshold, version, count int64
		autoTopUp                          bool
	)
	err := tx.QueryRow(ctx, `SELECT balance, low_threshold, auto_top_up_enabled, version, movement_count
        FROM balances WHERE company_id = $1 AND environment = $2 FOR UPDATE`, id.CompanyID, id.Environment).
		Scan(&balance, &threshold, &autoTopUp, &version, &count)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("loading pool %s: %w", id.StreamID(), err)
	}
	settings := domain.Settings{LowThreshold: money.FromMicros(threshold), AutoTopUpEnabled: autoTopUp}
	return &loaded{pool: domain.Restore(id, money.FromMicros(balance), settings, version), movementCount: count}, nil
}

// Update runs fn on the pool of id and saves what it changed, in one transaction of its own.
func (r *Repository) Update(ctx context.Context, id domain.ID, fn func(p *domain.Pool) error) error {
	return pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		if err := r.LockPools(ctx, tx, id); err != nil {
			return err
		}
		return r.updateTx(ctx, tx, id, fn)
	})
}

// LockPools takes the event-store locks of the pools' streams. A transaction that changes pools
// must take them first, before it writes anything (eventstore.LockStreams says why: it keeps
// each pool's events in version order for the relay).
func (r *Repository) LockPools(ctx context.Context, tx pgx.Tx, ids ...domain.ID) error {
	streams := make([]string, len(ids))
	for i, id := range ids {
		streams[i] = id.StreamID()
	}
	return r.store.LockStreams(ctx, tx, streams...)
}

// updateTx is Update within the caller's transaction, which must hold the pool's lock
// (LockPools).
func (r *Repository) updateTx(ctx context.Context, tx pgx.Tx, id domain.ID, fn func(p *domain.Pool) error) error {
	l, err := r.lock(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := fn(l.pool); err != nil {
		return err
	}
	return r.save(ctx, tx, l)
}

// RecordPoolFacts records facts of several pools in one transaction: grouped by pool, each
// pool's facts in their order (as RecordFacts does), all the pools saved at once, the pools
// locked in a fixed order so that two writers of the same pools cannot deadlock.
func (r *Repository) RecordPoolFacts(ctx context.Context, facts []domain.PoolFact) error {
	groups := map[domain.ID][]domain.Fact{}
	var pools []domain.ID
	for _, pf := range facts {
		if _, ok := groups[pf.Pool]; !ok {
			pools = append(pools, pf.Pool)
		}
		groups[pf.Pool] = append(groups[pf.Pool], pf.Fact)
	}
	sort.Slice(pools, func(i, j int) bool { return pools[i].StreamID() < pools[j].StreamID() })
	return pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		if err := r.LockPools(ctx, tx, pools...); err != nil {
			return err
		}
		ls := make([]*loaded, 0, len(pools))
		for _, id := range pools {
			l, _, err := r.record(ctx, tx, id, groups[id])
			if err != nil {
				return err
			}
			ls = append(ls, l)
		}
		return r.save(ctx, tx, ls...)
	})
}

// RecordFact records f on the pool of id in one transaction of its own (nothing when the pool
// has recorded f's key before), and returns, read in that transaction, the pool's transaction
// for f's key and its balance after it.
func (r *Repository) RecordFact(ctx context.Context, id domain.ID, f domain.Fact) (api.Transaction, api.Balance, error) {
	var (
		t api.Transaction
		b api.Balance
	)
	err := pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		if err := r.LockPools(ctx, tx, id); err != nil {
			return err
		}
		rec, err := r.RecordFacts(ctx, tx, id, []domain.Fact{f})
		if err != nil {
			return err
		}
		movementID := rec.Duplicates[f.Key]
		if len(rec.Movements) == 1 {
			movementID = rec.Movements[0].ID
		}
		view, err := Transaction(ctx, tx, id, movementID)
		if err != nil {
			return err
		}
		t = view.Transaction
		b, err = Balance(ctx, tx, id)
		return err
	})
	return t, b, err
}

// Recorded is the outcome of RecordFacts.
type Recorded struct {
	// Movements are the movements recorded, in the order of the facts.
	Movements []*domain.Movement
	// Duplicates are the keys of the facts the pool had already recorded, with the id of the
	// movement recorded for each.
	Duplicates map[string]uuid.UUID
}

// RecordFacts records, on the pool of id and within tx, each fact whose key the pool has not
// recorded before, in order, as one append with one expected version. Each movement row
// carries its key (unique per pool) and is written in the same transaction, so a redelivered
// or repeated fact records nothing, whatever crashes happen in between.
func (r *Repository) RecordFacts(ctx context.Context, tx pgx.Tx, id domain.ID, facts []domain.Fact) (Recorded, error) {
	l, out, err := r.record(ctx, tx, id, facts)
	if err != nil {
		return out, err
	}
	return out, r.save(ctx, tx, l)
}

// record is RecordFacts up to the save: the pool of id locked, loaded, and its new facts
// recorded on it.
func (r *Repository) record(ctx context.Context, tx pgx.Tx, id domain.ID, facts []domain.Fact) (*loaded, Recorded, error) {
	out := Recorded{Duplicates: map[string]uuid.UUID{}}
	for _, f := range facts {
		if want := factKey(f); f.Key != want {
			return nil, out, fmt.Errorf("pool: a %s fact with key %q, want %q", f.Type, f.Key, want)
		}
	}
	l, err := r.lock(ctx, tx, id)
	if err != nil {
		return nil, out, err
	}
	ids := make([]uuid.UUID, len(facts))
	for i := range facts {
		ids[i] = uuid.New()
	}
	fresh, err := r.newKeys(ctx, tx, id, facts, ids, out.Duplicates)
	if err != nil {
		return nil, out, err
	}
	if err := r.merchants.fillNames(ctx, tx, facts, fresh); err != nil {
		return nil, out, err
	}
	now := r.now().UTC()
	for i, f := range facts {
		if !fresh[i] {
			continue
		}
		m, err := l.pool.Record(f, ids[i], now)
		if err != nil {
			return nil, out, fmt.Errorf("recording %s %s: %w", f.Type, f.Key, err)
		}
		out.Movements = append(out.Movements, m)
	}
	return l, out, nil
}

// factKey is the key a fact must have: the one a rebuild derives from the movement's event
// (domain.KeyOf).
func factKey(f domain.Fact) string {
	var paymentID string
	if f.Payment != nil {
		paymentID = f.Payment.PaymentID
	}
	return domain.KeyOf(f.Type, f.TxHash, f.WithdrawalID, paymentID)
}

// newKeys reports which facts are new: their key not recorded on the pool before and not
// repeating an earlier fact of the batch. The others go into dups with the id of the movement
// recorded for their key (ids[i] for a repeat of the batch's fact i). It runs under the pool's
// row lock, which every writer of the pool's movements holds, so what it reads cannot change
// before the transaction commits; the unique key of movements backs it.
func (r *Repository) newKeys(ctx context.Context, tx pgx.Tx, id domain.ID, facts []domain.Fact, ids []uuid.UUID,
	dups map[string]uuid.UUID) ([]bool, error) {
	keys := make([]string, 0, len(facts))
	first := make(map[string]int, len(facts))
	for i, f := range facts {
		if _, dup := first[f.Key]; !dup {
			first[f.Key] = i
			keys = append(keys, f.Key)
		}
	}
	// Planned afresh on every call (QueryExecModeExec: an unnamed statement, not the cached
	// one): a plan cached while the pool's table was small scans the whole table for each key
	// once it is large (seconds per batch on a hot pool), whereas a plan made now sees the
	// table's current size and looks the keys up in the unique index.
	rows, err := tx.Query(ctx, `SELECT key, id FROM movements
        WHERE pool_id = `+poolIDOf12+` AND company_id = $1 AND environment = $2 AND key = ANY($3::text[])`,
		pgx.QueryExecModeExec,
		id.CompanyID, id.Environment, keys)
	if err != nil {
		return nil, fmt.Errorf("reading movement keys: %w", err)
	}
	var (
		k string
		m pgtype.UUID
	)
	if _, err := pgx.ForEachRow(rows, []any{&k, &m}, func() error {
		dups[k] = m.Bytes
		return nil
	}); err != nil {
		return nil, fmt.Errorf("reading movement keys: %w", err)
	}
	fresh := make([]bool, len(facts))
	for i, f := range facts {
		if _, recorded := dups[f.Key]; recorded {
			continue
		}
		if j := first[f.Key]; j != i {
			dups[f.Key] = ids[j]
			continue
		}
		fresh[i] = true
	}
	return fresh, nil
}

// save appends the changes of the pools of ls, each with the version it was loaded at, and
// updates the read tables to match: one append for all the pools, one COPY of all their
// movements and one round trip of their balance updates, so that a batch of facts on many
// pools costs about what one on a single pool does (docs/BENCHMARKS.md: per pool, these were
// most of the pool service's database time when payments come in small batches).
func (r *Repository) save(ctx context.Context, tx pgx.Tx, ls ...*loaded) error {
	var (
		appends []eventstore.StreamAppend
		changed []*loaded
	)
	for _, l := range ls {
		p := l.pool
		changes := p.Changes()
		if len(changes) == 0 {
			// A pool locked for the first time and left unchanged (settings set to what they
			// were) has no event: its row goes, as a rebuild from the events would not make it.
			if p.Version() == 0 {
				if _, err := tx.Exec(ctx, `DELETE FROM balances WHERE company_id = $1 AND environment = $2 AND version = 0`,
					p.ID().CompanyID, p.ID().Environment); err != nil {
					return fmt.Errorf("releasing pool %s: %w", p.ID().StreamID(), err)
				}
			}
			continue
		}
		evs, err := toEvents(p.ID(), changes)
		if err != nil {
			return err
		}
		appends = append(appends, eventstore.StreamAppend{StreamID: p.ID().StreamID(),
			Expected: p.Version() - int64(len(changes)), Events: evs})
		changed = append(changed, l)
	}
	if len(changed) == 0 {
		return nil
	}
	res, err := r.store.AppendStreamsTx(ctx, tx, appends)
	if err != nil {
		return err
	}
	for i, l := range changed {
		if res[i].Version != l.pool.Version() {
			return fmt.Errorf("pool %s: appended up to version %d, aggregate at %d", l.pool.ID().StreamID(),
				res[i].Version, l.pool.Version())
		}
	}
	counts, err := r.insertMovements(ctx, tx, changed)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	for i, l := range changed {
		p, s, changes := l.pool, l.pool.Settings(), l.pool.Changes()
		b.Queue(`UPDATE balances SET balance = $3, low_threshold = $4, auto_top_up_enabled = $5,
        version = $6, movement_count = movement_count + $7, deposit_count = deposit_count + $8,
        debit_count = debit_count + $9, credit_count = credit_count + $10,
        withdrawal_count = withdrawal_count + $11, updated_at = $12
        WHERE company_id = $1 AND environment = $2`,
			p.ID().CompanyID, p.ID().Environment, p.Balance().Micros(), s.LowThreshold.Micros(), s.AutoTopUpEnabled,
			p.Version(), counts[i].total, counts[i].byType[domain.Deposit], counts[i].byType[domain.Debit],
			counts[i].byType[domain.Credit], counts[i].byType[domain.Withdrawal], changeTime(changes[len(changes)-1]))
	}
	br := tx.SendBatch(ctx, b)
	for _, l := range changed {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("updating pool %s: %w", l.pool.ID().StreamID(), err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("updating pools: %w", err)
	}
	return nil
}

// changeTime is when c happened: its event's occurred_at, and the balances row's updated_at
// once c is the pool's last change (a pure function of the events, unlike now()).
func changeTime(c domain.Change) time.Time {
	switch c := c.(type) {
	case *domain.Movement:
		return c.CreatedAt
	case *domain.SettingsChanged:
		return c.At
	case *domain.LowBalance:
		return c.At
	default:
		return time.Time{}
	}
}

type movementCounts struct {
	total  int64
	byType map[domain.MovementType]int64
}

var movementColumns = []string{"id", "company_id", "environment", "seq", "type", "amount", "balance_before",
	"balance_after", "status", "tx_hash", "description", "payment_id", "payment_amount", "merchant_id",
	"merchant_name", "withdrawal_id", "to_address", "created_at", "confirmed_at", "key"}

// insertMovements writes the movements among the changes of the pools of ls, numbered on from
// each pool's count, with one COPY, and returns each pool's counts.
func (r *Repository) insertMovements(ctx context.Context, tx pgx.Tx, ls []*loaded) ([]movementCounts, error) {
	all := make([]movementCounts, len(ls))
	var rows [][]any
	for i, l := range ls {
		counts := movementCounts{byType: map[domain.MovementType]int64{}}
		seq := l.movementCount
		for _, c := range l.pool.Changes() {
			m, ok := c.(*domain.Movement)
			if !ok {
				continue
			}
			seq++
			counts.total++
			counts.byType[m.Type]++
			rows = append(rows, movementRow(l.pool.ID(), seq, m))
		}
		all[i] = counts
	}
	if len(rows) == 0 {
		return all, nil
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"movements"}, movementColumns, pgx.CopyFromRows(rows)); err != nil {
		return all, fmt.Errorf("inserting movements of %d pools: %w", len(ls), err)
	}
	return all, nil
}

func movementRow(id domain.ID, seq int64, m *domain.Movement) []any {
	var paymentID, merchantID, merchantName, withdrawalID, toAddress *string
	var paymentAmount *int64
	if m.Payment != nil {
		paymentID, merchantID, merchantName = &m.Payment.PaymentID, &m.Payment.MerchantID, &m.Payment.MerchantName
		a := m.Payment.Amount.Micros()
		paymentAmount = &a
	}
	if m.Type == domain.Withdrawal {
		withdrawalID, toAddress = &m.WithdrawalID, &m.ToAddress
	}
	return []any{pgtype.UUID{Bytes: m.ID, Valid: true}, id.CompanyID, id.Environment, seq, string(m.Type), m.Amount.Micros(),
		m.BalanceBefore.Micros(), m.BalanceAfter.Micros(), string(m.Status), m.TxHash, m.Description,
		paymentID, paymentAmount, merchantID, merchantName, withdrawalID, toAddress, m.CreatedAt, m.ConfirmedAt, m.Key}
}
