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
	l, err := scanLoaded(tx.QueryRow(ctx, selectForUpdate, id.CompanyID, id.Environment), id)
	if !errors.Is(err, pgx.ErrNoRows) {
		return l, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO balances (company_id, environment, low_threshold)
        VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, id.CompanyID, id.Environment,
		domain.DefaultLowThreshold.Micros()); err != nil {
		return nil, fmt.Errorf("creating pool %s: %w", id.StreamID(), err)
	}
	return scanLoaded(tx.QueryRow(ctx, selectForUpdate, id.CompanyID, id.Environment), id)
}

// lockAll is lock for each pool of ids, in their order, with one round trip for all the pools
// that have a row (a pool's first write creates its row afterwards, with lock). The transaction
// holds the pools' stream locks (LockPools), which every writer of a pool takes first, so the
// order in which the rows are locked cannot deadlock.
func (r *Repository) lockAll(ctx context.Context, tx pgx.Tx, ids []domain.ID) ([]*loaded, error) {
	ls := make([]*loaded, len(ids))
	b := &pgx.Batch{}
	for i, id := range ids {
		b.Queue(selectForUpdate, id.CompanyID, id.Environment).QueryRow(func(row pgx.Row) error {
			l, err := scanLoaded(row, id)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			ls[i] = l
			return err
		})
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		if ls[i] != nil {
			continue
		}
		l, err := r.lock(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		ls[i] = l
	}
	return ls, nil
}

const selectForUpdate = `SELECT balance, low_threshold, auto_top_up_enabled, version, movement_count
        FROM balances WHERE company_id = $1 AND environment = $2 FOR UPDATE`

// scanLoaded reads the pool of id from a row of selectForUpdate; pgx.ErrNoRows, unwrapped,
// when the pool has no row yet.
func scanLoaded(row pgx.Row, id domain.ID) (*loaded, error) {
	var (
		balance, threshold, version, count int64
		autoTopUp                          bool
	)
	if err := row.Scan(&balance, &threshold, &autoTopUp, &version, &count); err != nil {
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
		ps, err := r.recordAll(ctx, tx, pools, groups)
		if err != nil {
			return err
		}
		ls := make([]*loaded, len(ps))
		for i, p := range ps {
			ls[i] = p.l
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
	ps, err := r.recordAll(ctx, tx, []domain.ID{id}, map[domain.ID][]domain.Fact{id: facts})
	if err != nil {
		return Recorded{}, err
	}
	return ps[0].out, r.save(ctx, tx, ps[0].l)
}

// pending is a pool's facts in a transaction that records them: the pool locked and loaded,
// the movement id each fact gets if it is new, which are new, and the outcome.
type pending struct {
	l     *loaded
	facts []domain.Fact
	ids   []uuid.UUID
	fresh []bool
	out   Recorded
}

// recordAll is RecordFacts up to the save, for each pool of pools (their stream locks held) and
// its facts in groups: the pools locked and loaded, and their new facts recorded on them. The
// reads are made for all the pools at once (the row locks, the recorded keys, the merchant
// names), so that a batch of facts on many pools costs about the round trips of one pool.
func (r *Repository) recordAll(ctx context.Context, tx pgx.Tx, pools []domain.ID, groups map[domain.ID][]domain.Fact) ([]*pending, error) {
	for _, id := range pools {
		for _, f := range groups[id] {
			if want := factKey(f); f.Key != want {
				return nil, fmt.Errorf("pool: a %s fact with key %q, want %q", f.Type, f.Key, want)
			}
		}
	}
	ls, err := r.lockAll(ctx, tx, pools)
	if err != nil {
		return nil, err
	}
	ps := make([]*pending, len(pools))
	for i, id := range pools {
		facts := groups[id]
		p := &pending{l: ls[i], facts: facts, ids: make([]uuid.UUID, len(facts)),
			out: Recorded{Duplicates: map[string]uuid.UUID{}}}
		for j := range facts {
			p.ids[j] = uuid.New()
		}
		ps[i] = p
	}
	if err := r.newKeys(ctx, tx, ps); err != nil {
		return nil, err
	}
	if err := r.merchants.fillNames(ctx, tx, ps); err != nil {
		return nil, err
	}
	now := r.now().UTC()
	for _, p := range ps {
		for i, f := range p.facts {
			if !p.fresh[i] {
				continue
			}
			m, err := p.l.pool.Record(f, p.ids[i], now)
			if err != nil {
				return nil, fmt.Errorf("recording %s %s: %w", f.Type, f.Key, err)
			}
			p.out.Movements = append(p.out.Movements, m)
		}
	}
	return ps, nil
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

// newKeys sets, for each pool of ps, which of its facts are new: their key not recorded on the
// pool before and not repeating an earlier fact of the pool's batch. The others go into the
// pool's Duplicates with the id of the movement recorded for their key (ids[i] for a repeat of
// the batch's fact i). It runs under the pools' row locks, which every writer of a pool's
// movements holds, so what it reads cannot change before the transaction commits; the unique
// key of movements backs it. One query for all the pools.
func (r *Repository) newKeys(ctx context.Context, tx pgx.Tx, ps []*pending) error {
	var (
		idx                   []int32
		companies, envs, keys []string
		firsts                = make([]map[string]int, len(ps))
	)
	for pi, p := range ps {
		id := p.l.pool.ID()
		firsts[pi] = make(map[string]int, len(p.facts))
		for i, f := range p.facts {
			if _, dup := firsts[pi][f.Key]; !dup {
				firsts[pi][f.Key] = i
				idx, companies, envs, keys = append(idx, int32(pi)), append(companies, id.CompanyID),
					append(envs, id.Environment), append(keys, f.Key)
			}
		}
	}
	// Planned afresh on every call (QueryExecModeExec: an unnamed statement, not the cached
	// one): a plan cached while the pool's table was small scans the whole table for each key
	// once it is large (seconds per batch on a hot pool), whereas a plan made now sees the
	// table's current size and looks the keys up in the unique index.
	rows, err := tx.Query(ctx, `SELECT k.pool, m.key, m.id
        FROM unnest($1::int[], $2::text[], $3::text[], $4::text[]) AS k(pool, company_id, environment, key)
        JOIN movements m ON m.pool_id = `+poolIDOf("k.company_id", "k.environment")+`
         AND m.key = k.key AND m.company_id = k.company_id AND m.environment = k.environment`,
		pgx.QueryExecModeExec, idx, companies, envs, keys)
	if err != nil {
		return fmt.Errorf("reading movement keys: %w", err)
	}
	var (
		pool int32
		k    string
		m    pgtype.UUID
	)
	if _, err := pgx.ForEachRow(rows, []any{&pool, &k, &m}, func() error {
		if pool < 0 || int(pool) >= len(ps) {
			return fmt.Errorf("a movement key of pool %d of %d", pool, len(ps))
		}
		ps[pool].out.Duplicates[k] = m.Bytes
		return nil
	}); err != nil {
		return fmt.Errorf("reading movement keys: %w", err)
	}
	for pi, p := range ps {
		p.fresh = make([]bool, len(p.facts))
		for i, f := range p.facts {
			if _, recorded := p.out.Duplicates[f.Key]; recorded {
				continue
			}
			if j := firsts[pi][f.Key]; j != i {
				p.out.Duplicates[f.Key] = p.ids[j]
				continue
			}
			p.fresh[i] = true
		}
	}
	return nil
}

// save appends the changes of the pools of ls, each with the version it was loaded at, and
// updates the read tables to match: one append for all the pools, then one round trip of the
// INSERT of all their movements and their balance updates, so that a batch of facts on many
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
	b := &pgx.Batch{}
	counts, inserting := queueMovements(b, changed)
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
	if inserting {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("inserting movements of %d pools: %w", len(changed), err)
		}
	}
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

// queueMovements queues on b one INSERT of the movements among the changes of the pools of ls,
// numbered on from each pool's count, and returns each pool's counts and whether it queued the
// INSERT (none when no change is a movement). It goes in the round trip of the balance updates:
// a COPY took two round trips of its own, for the one or two rows a batch holds at moderate
// rates (docs/BENCHMARKS.md).
func queueMovements(b *pgx.Batch, ls []*loaded) ([]movementCounts, bool) {
	all := make([]movementCounts, len(ls))
	var c movementCols
	for i, l := range ls {
		counts := movementCounts{byType: map[domain.MovementType]int64{}}
		seq := l.movementCount
		for _, ch := range l.pool.Changes() {
			m, ok := ch.(*domain.Movement)
			if !ok {
				continue
			}
			seq++
			counts.total++
			counts.byType[m.Type]++
			c.add(l.pool.ID(), seq, m)
		}
		all[i] = counts
	}
	if len(c.ids) == 0 {
		return all, false
	}
	b.Queue(insertMovements,
		c.ids, c.companies, c.envs, c.seqs, c.types, c.amounts, c.befores, c.afters, c.statuses, c.hashes,
		c.descriptions, c.paymentIDs, c.paymentAmounts, c.merchantIDs, c.merchantNames, c.withdrawalIDs,
		c.toAddresses, c.created, c.confirmed, c.keys)
	return all, true
}

// movementCols are the columns of movements rows, one array each (NULL where a pointer is nil).
type movementCols struct {
	ids                                                          []pgtype.UUID
	companies, envs, types, statuses, hashes, descriptions, keys []string
	seqs, amounts, befores, afters                               []int64
	paymentIDs, merchantIDs, merchantNames, withdrawalIDs        []*string
	toAddresses                                                  []*string
	paymentAmounts                                               []*int64
	created, confirmed                                           []time.Time
}

func (c *movementCols) add(id domain.ID, seq int64, m *domain.Movement) {
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
	c.ids = append(c.ids, pgtype.UUID{Bytes: m.ID, Valid: true})
	c.companies, c.envs, c.seqs = append(c.companies, id.CompanyID), append(c.envs, id.Environment), append(c.seqs, seq)
	c.types, c.amounts = append(c.types, string(m.Type)), append(c.amounts, m.Amount.Micros())
	c.befores, c.afters = append(c.befores, m.BalanceBefore.Micros()), append(c.afters, m.BalanceAfter.Micros())
	c.statuses, c.hashes = append(c.statuses, string(m.Status)), append(c.hashes, m.TxHash)
	c.descriptions, c.keys = append(c.descriptions, m.Description), append(c.keys, m.Key)
	c.paymentIDs, c.paymentAmounts = append(c.paymentIDs, paymentID), append(c.paymentAmounts, paymentAmount)
	c.merchantIDs, c.merchantNames = append(c.merchantIDs, merchantID), append(c.merchantNames, merchantName)
	c.withdrawalIDs, c.toAddresses = append(c.withdrawalIDs, withdrawalID), append(c.toAddresses, toAddress)
	c.created, c.confirmed = append(c.created, m.CreatedAt), append(c.confirmed, m.ConfirmedAt)
}
