package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain"
)

// Repository keeps merchants in the event store (one stream per merchant) and their
// read tables, both in the same transaction: a command's reply is visible to the next read.
type Repository struct {
	db    *pgxpool.Pool
	store *eventstore.Store
}

// NewRepository returns the repository on db (search_path merchant).
func NewRepository(db *pgxpool.Pool, store *eventstore.Store) *Repository {
	return &Repository{db: db, store: store}
}

var _ app.Repository = (*Repository)(nil)

// Create reserves the email for the company and environment, provisions the merchant's wallet,
// appends merchant.created and inserts the read row, in one transaction of two round trips:
// the BEGIN goes out with the email reservation, and the statements after the wallet
// derivation (the wallet record, the read row, the append) go out together with the COMMIT.
// domain.ErrDuplicateEmail when the email is taken (no wallet is provisioned then);
// domain.ErrWalletUnavailable when the provider fails; app.ErrMerchantExists when the id is
// taken. Nothing is stored unless everything is.
func (r *Repository) Create(ctx context.Context, nm app.NewMerchant, wallets app.WalletProvider) (*domain.Merchant, error) {
	conn, err := r.db.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquiring a connection: %w", err)
	}
	// A connection left inside a transaction (a failed ROLLBACK) is closed by the pool on
	// release, never reused.
	defer conn.Release()
	m := &domain.Merchant{}
	p := &pipeline{tx: conn.Conn()}
	p.begin()
	err = r.create(ctx, p, m, nm, wallets)
	if err == nil && !p.committed {
		err = commit(ctx, conn.Conn())
	}
	if err != nil && conn.Conn().PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	if errors.Is(err, eventstore.ErrConcurrency) || pg.IsUniqueViolation(err, "merchants_pkey") {
		return nil, app.ErrMerchantExists
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// create runs the statements of Create on p, whose transaction has begun.
func (r *Repository) create(ctx context.Context, p *pipeline, m *domain.Merchant, nm app.NewMerchant,
	wallets app.WalletProvider) error {
	tag, err := p.Exec(ctx, `INSERT INTO merchant_emails (company_id, environment, email_key, merchant_id)
        VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		nm.CompanyID, nm.Environment, domain.EmailKey(nm.Email), pgUUID(nm.ID))
	if err != nil {
		return fmt.Errorf("reserving email: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return domain.ErrDuplicateEmail
	}
	w, err := wallets.Provision(withCreation(ctx, p),
		app.WalletRequest{CompanyID: nm.CompanyID, Environment: nm.Environment, MerchantID: nm.ID})
	if err != nil {
		return fmt.Errorf("%w: %v", domain.ErrWalletUnavailable, err)
	}
	ev, err := domain.Create(domain.NewMerchantParams{ID: nm.ID, Profile: domain.Profile{CompanyID: nm.CompanyID,
		Environment: nm.Environment, Name: nm.Name, Email: nm.Email, WalletAddress: w.Address, WalletUserID: w.UserID}}, nm.At)
	if err != nil {
		return err
	}
	if err := m.Apply(ev); err != nil {
		return err
	}
	if err := applyToReadTables(ctx, p, ev, 1); err != nil {
		return err
	}
	e, err := encode(ctx, nm.CompanyID, nm.Environment, ev)
	if err != nil {
		return err
	}
	// The append fails in the database when the stream exists, so the COMMIT can go with it.
	p.commitWithNext()
	if _, err := r.store.AppendNewTx(ctx, p, StreamID(nm.ID), e); err != nil {
		return err
	}
	return p.flush(ctx)
}

// commit commits the transaction open on conn. A transaction that failed answers COMMIT with
// ROLLBACK and no error (as pgx.Tx.Commit checks too).
func commit(ctx context.Context, conn *pgx.Conn) error {
	tag, err := conn.Exec(ctx, "COMMIT")
	if err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	if tag.String() == "ROLLBACK" {
		return fmt.Errorf("committing: %w", pgx.ErrTxCommitRollback)
	}
	return nil
}

type creationKey struct{}

// withCreation returns ctx carrying the pipeline of a merchant's creation, for a wallet
// provider that keeps its records in the merchant database.
func withCreation(ctx context.Context, p *pipeline) context.Context {
	return context.WithValue(ctx, creationKey{}, p)
}

func creationFrom(ctx context.Context) *pipeline {
	p, _ := ctx.Value(creationKey{}).(*pipeline)
	return p
}

// Get returns the merchant of id in scope (ErrNotFound otherwise).
func (r *Repository) Get(ctx context.Context, id uuid.UUID, scope app.Scope) (*domain.Merchant, error) {
	return r.load(ctx, r.db, id, scope, false)
}

// Update runs decide on the merchant locked for the transaction, appends the events it returns
// at the version it was loaded at, and applies them to the read tables. Concurrent commands on
// one merchant take turns on the row lock, so none is lost.
func (r *Repository) Update(ctx context.Context, id uuid.UUID, scope app.Scope,
	decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error) {
	var out *domain.Merchant
	err := pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		if err := r.LockMerchants(ctx, tx, id); err != nil {
			return err
		}
		m, err := r.UpdateTx(ctx, tx, id, scope, decide)
		out = m
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LockMerchants takes the event-store locks of the merchants' streams. A transaction that
// appends to existing merchants must take them first, before it writes anything
// (eventstore.LockStreams says why: it keeps each merchant's events in version order for the
// relay).
func (r *Repository) LockMerchants(ctx context.Context, tx pgx.Tx, ids ...uuid.UUID) error {
	streams := make([]string, len(ids))
	for i, id := range ids {
		streams[i] = StreamID(id)
	}
	return r.store.LockStreams(ctx, tx, streams...)
}

// UpdateTx is Update inside the caller's transaction (the ledger consumer records its
// de-duplication in the same one).
func (r *Repository) UpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, scope app.Scope,
	decide func(*domain.Merchant) ([]domain.Event, error)) (*domain.Merchant, error) {
	m, err := r.load(ctx, tx, id, scope, true)
	if err != nil {
		return nil, err
	}
	loaded := m.Version()
	evs, err := decide(m)
	if err != nil || len(evs) == 0 {
		return m, err
	}
	for _, ev := range evs {
		if err := m.Apply(ev); err != nil {
			return nil, err
		}
	}
	if err := r.appendAndApply(ctx, tx, m.CompanyID(), m.Environment(), id, loaded, evs...); err != nil {
		return nil, err
	}
	return m, nil
}

// HasEntry reports whether the merchant's ledger holds an entry of sourceKey.
func (r *Repository) HasEntry(ctx context.Context, tx pgx.Tx, id uuid.UUID, sourceKey string) (bool, error) {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM merchant_ledger WHERE merchant_id = $1 AND source_key = $2)`,
		pgUUID(id), sourceKey).Scan(&ok)
	return ok, err
}

// Events returns the domain events of a merchant's stream, for rebuilding it (tests compare the
// fold with the read row).
func (r *Repository) Events(ctx context.Context, id uuid.UUID) ([]domain.Event, error) {
	recs, err := r.store.ReadStream(ctx, r.db, StreamID(id), 0)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Event, 0, len(recs))
	for _, rec := range recs {
		ev, err := decodeRecorded(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

const merchantColumns = `id, company_id, environment, name, email, wallet_address, wallet_user_id, status,
    balance_micros, version, created_at, updated_at`

const selectMerchant = `SELECT ` + merchantColumns + ` FROM merchants WHERE id = $1`

func (r *Repository) load(ctx context.Context, q eventstore.Querier, id uuid.UUID, scope app.Scope,
	lock bool) (*domain.Merchant, error) {
	sql := selectMerchant
	if lock {
		sql += " FOR UPDATE"
	}
	m, err := scanMerchant(q.QueryRow(ctx, sql, pgUUID(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("loading merchant %s: %w", id, err)
	}
	if !scope.Admits(m.CompanyID(), m.Environment()) {
		return nil, domain.ErrNotFound
	}
	return m, nil
}

func scanMerchant(row pgx.Row) (*domain.Merchant, error) {
	var (
		s       domain.Snapshot
		id      pgtype.UUID
		status  string
		balance int64
	)
	err := row.Scan(&id, &s.CompanyID, &s.Environment, &s.Name, &s.Email, &s.WalletAddress,
		&s.WalletUserID, &status, &balance, &s.Version, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return nil, err
	}
	s.ID, s.Status, s.Balance = id.Bytes, domain.Status(status), money.FromMicros(balance)
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return domain.Restore(s), nil
}

// UpdateManyTx is UpdateTx for several merchants at once, in the caller's transaction: it locks
// and loads the merchants of order (in id order, so that two batches sharing merchants never
// deadlock), runs decide once with all of them, appends the events decide returns for each
// merchant (in the order of order) and applies them to the read tables with set-based
// statements. A merchant that does not exist or is outside its scope fails the whole call
// with domain.ErrNotFound.
func (r *Repository) UpdateManyTx(ctx context.Context, tx pgx.Tx, order []uuid.UUID, scopes map[uuid.UUID]app.Scope,
	decide func(map[uuid.UUID]*domain.Merchant) (map[uuid.UUID][]domain.Event, error)) error {
	rows, err := tx.Query(ctx, `SELECT `+merchantColumns+` FROM merchants WHERE id = ANY($1) ORDER BY id FOR UPDATE`, pgUUIDs(order))
	if err != nil {
		return fmt.Errorf("loading merchants: %w", err)
	}
	ms, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*domain.Merchant, error) { return scanMerchant(row) })
	if err != nil {
		return fmt.Errorf("loading merchants: %w", err)
	}
	byID := make(map[uuid.UUID]*domain.Merchant, len(ms))
	for _, m := range ms {
		byID[m.ID()] = m
	}
	for _, id := range order {
		m, ok := byID[id]
		if !ok || !scopes[id].Admits(m.CompanyID(), m.Environment()) {
			return fmt.Errorf("merchant %s: %w", id, domain.ErrNotFound)
		}
	}
	decided, err := decide(byID)
	if err != nil {
		return err
	}
	var (
		applied []versioned
		appends []eventstore.StreamAppend
	)
	for _, id := range order {
		evs := decided[id]
		if len(evs) == 0 {
			continue
		}
		m := byID[id]
		loaded := m.Version()
		for _, ev := range evs {
			if err := m.Apply(ev); err != nil {
				return err
			}
		}
		encoded, err := encodeAll(ctx, m.CompanyID(), m.Environment(), evs)
		if err != nil {
			return err
		}
		appends = append(appends, eventstore.StreamAppend{StreamID: StreamID(id), Expected: loaded, Events: encoded})
		for i, ev := range evs {
			applied = append(applied, versioned{ev: ev, version: loaded + int64(i) + 1})
		}
	}
	// One statement appends the events of every merchant of the batch (one per merchant
	// before: most of the merchant service's database time when payments come in small
	// batches, docs/BENCHMARKS.md).
	if _, err := r.store.AppendStreamsTx(ctx, tx, appends); err != nil {
		return err
	}
	return applyManyToReadTables(ctx, tx, applied)
}

// ExistingEntriesMany returns which of the (merchant, source key) pairs the ledger already
// holds, by merchant.
func (r *Repository) ExistingEntriesMany(ctx context.Context, tx pgx.Tx, ids []uuid.UUID,
	sourceKeys []string) (map[uuid.UUID]map[string]bool, error) {
	rows, err := tx.Query(ctx, `SELECT l.merchant_id, l.source_key FROM merchant_ledger l
        JOIN unnest($1::uuid[], $2::text[]) AS k(merchant_id, source_key)
          ON l.merchant_id = k.merchant_id AND l.source_key = k.source_key`, pgUUIDs(ids), sourceKeys)
	if err != nil {
		return nil, fmt.Errorf("looking up ledger entries: %w", err)
	}
	out := map[uuid.UUID]map[string]bool{}
	var (
		id  pgtype.UUID
		key string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &key}, func() error {
		if out[id.Bytes] == nil {
			out[id.Bytes] = map[string]bool{}
		}
		out[id.Bytes][key] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("looking up ledger entries: %w", err)
	}
	return out, nil
}

// appendAndApply appends evs to the merchant's stream at version expected and applies them to
// the read tables; the caller's transaction holds both.
func (r *Repository) appendAndApply(ctx context.Context, tx pgx.Tx, companyID, env string, id uuid.UUID,
	expected int64, evs ...domain.Event) error {
	if err := r.appendEvents(ctx, tx, companyID, env, id, expected, evs); err != nil {
		return err
	}
	applied := make([]versioned, len(evs))
	for i, ev := range evs {
		applied[i] = versioned{ev: ev, version: expected + int64(i) + 1}
	}
	return applyManyToReadTables(ctx, tx, applied)
}

// appendEvents encodes evs and appends them to the merchant's stream at version expected.
func (r *Repository) appendEvents(ctx context.Context, q eventstore.Querier, companyID, env string, id uuid.UUID,
	expected int64, evs []domain.Event) error {
	encoded, err := encodeAll(ctx, companyID, env, evs)
	if err != nil {
		return err
	}
	_, err = r.store.AppendTx(ctx, q, StreamID(id), expected, encoded...)
	return err
}

// encodeAll encodes evs of a merchant of companyID in env for the event store.
func encodeAll(ctx context.Context, companyID, env string, evs []domain.Event) ([]eventstore.Event, error) {
	encoded := make([]eventstore.Event, len(evs))
	for i, ev := range evs {
		e, err := encode(ctx, companyID, env, ev)
		if err != nil {
			return nil, err
		}
		encoded[i] = e
	}
	return encoded, nil
}

// versioned is an event with the stream version it was appended at.
type versioned struct {
	ev      domain.Event
	version int64
}

// applyManyToReadTables applies appended events to the read tables, with the same result as
// applyToReadTables on each in turn (which a rebuild uses): ledger entries, the bulk of the
// events, take one INSERT of all their rows and one UPDATE of each merchant's balance and
// version (those of its last entry), pipelined; any other event goes through
// applyToReadTables.
func applyManyToReadTables(ctx context.Context, tx pgx.Tx, evs []versioned) error {
	if len(evs) < 2 {
		for _, v := range evs {
			if err := applyToReadTables(ctx, txWriter{tx}, v.ev, v.version); err != nil {
				return err
			}
		}
		return nil
	}
	n := len(evs)
	var (
		ids, merchantIDs               = make([]pgtype.UUID, 0, n), make([]pgtype.UUID, 0, n)
		seqs, amounts, befores, afters = make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
		types, payments, hashes        = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		statuses, descriptions, keys   = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		created                        = make([]time.Time, 0, n)
		last                           = map[uuid.UUID]int{} // merchant → index of its last entry
		order                          []uuid.UUID
	)
	for _, v := range evs {
		e, ok := v.ev.(domain.LedgerEntryRecorded)
		if !ok {
			// Not a ledger-only batch (none is in practice): one event at a time.
			for _, v := range evs {
				if err := applyToReadTables(ctx, txWriter{tx}, v.ev, v.version); err != nil {
					return err
				}
			}
			return nil
		}
		if _, seen := last[e.MerchantID]; !seen {
			order = append(order, e.MerchantID)
		}
		last[e.MerchantID] = len(ids)
		ids, merchantIDs, seqs = append(ids, pgUUID(e.EntryID)), append(merchantIDs, pgUUID(e.MerchantID)), append(seqs, v.version)
		types, amounts = append(types, string(e.Type)), append(amounts, e.Amount.Micros())
		befores, afters = append(befores, e.BalanceBefore.Micros()), append(afters, e.BalanceAfter.Micros())
		payments, hashes, statuses = append(payments, e.PaymentID), append(hashes, e.TxHash), append(statuses, e.Status)
		descriptions, keys, created = append(descriptions, e.Description), append(keys, e.SourceKey()), append(created, e.At)
	}
	upIDs, upBalances, upVersions := make([]pgtype.UUID, len(order)), make([]int64, len(order)), make([]int64, len(order))
	for i, id := range order {
		j := last[id]
		upIDs[i], upBalances[i], upVersions[i] = pgUUID(id), afters[j], seqs[j]
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO merchant_ledger (id, merchant_id, seq, type, amount_micros, balance_before_micros,
            balance_after_micros, payment_id, tx_hash, status, description, source_key, created_at)
        SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[],
            $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[])`,
		ids, merchantIDs, seqs, types, amounts, befores, afters, payments, hashes, statuses, descriptions, keys, created)
	b.Queue(`UPDATE merchants m SET balance_micros = u.balance, version = u.version
        FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS u(id, balance, version) WHERE m.id = u.id`,
		upIDs, upBalances, upVersions)
	return sendBatch(ctx, tx, b, "updating read tables")
}

// sendBatch sends the statements of b in one round trip and returns the first error.
func sendBatch(ctx context.Context, tx batcher, b *pgx.Batch, what string) error {
	br := tx.SendBatch(ctx, b)
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// applyToReadTables is the projection of one event at stream version version (what a rebuild
// applies; applyManyToReadTables gives the same rows).
func applyToReadTables(ctx context.Context, w writer, ev domain.Event, version int64) error {
	var err error
	switch e := ev.(type) {
	case domain.Created:
		err = w.write(ctx, `INSERT INTO merchants (id, company_id, environment, name, email, wallet_address,
            wallet_user_id, status, balance_micros, version, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10, $10)`,
			pgUUID(e.MerchantID), e.CompanyID, e.Environment, e.Name, e.Email, e.WalletAddress, e.WalletUserID,
			string(domain.StatusActive), version, e.At)
	case domain.StatusChanged:
		err = w.write(ctx, `UPDATE merchants SET status = $2, updated_at = $3, version = $4 WHERE id = $1`,
			pgUUID(e.MerchantID), string(e.To), e.At, version)
	case domain.LedgerEntryRecorded:
		err = w.write(ctx, `INSERT INTO merchant_ledger (id, merchant_id, seq, type, amount_micros,
            balance_before_micros, balance_after_micros, payment_id, tx_hash, status, description, source_key, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			pgUUID(e.EntryID), pgUUID(e.MerchantID), version, string(e.Type), e.Amount.Micros(), e.BalanceBefore.Micros(),
			e.BalanceAfter.Micros(), e.PaymentID, e.TxHash, e.Status, e.Description, e.SourceKey(), e.At)
		if err == nil {
			err = w.write(ctx, `UPDATE merchants SET balance_micros = $2, version = $3 WHERE id = $1`,
				pgUUID(e.MerchantID), e.BalanceAfter.Micros(), version)
		}
	default:
		err = fmt.Errorf("unknown merchant event %T", ev)
	}
	if err != nil {
		return fmt.Errorf("updating read tables: %w", err)
	}
	return nil
}

// pgUUID passes a uuid to pgx in binary form. A uuid.UUID goes through its driver.Valuer:
// pgx v5 renders it as text, fails to encode that as binary (building an error), parses it
// back and encodes the result, several times the work of the whole parameter.
func pgUUID(id uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

// pgUUIDs is pgUUID of each id.
func pgUUIDs(ids []uuid.UUID) []pgtype.UUID {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		out[i] = pgUUID(id)
	}
	return out
}
