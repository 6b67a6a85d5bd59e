package adapters

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	poolv1 "github.com/payplat/platform/proto-events/gen/payplat/pool/v1"

	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/migrations"
)

// Schema is the PostgreSQL schema of the pool's event store and read tables, the one its
// migrations create; payplat-ctl passes it to ReadModelDefinition.
const Schema = migrations.Schema

// ReadModelName is the name operators use for the pool read tables
// (`payplat-ctl projections rebuild pool`).
const ReadModelName = "pool"

// ReadModelTables are the tables the pool events project to, in the order they are rebuilt
// (none has a foreign key; balances first, as for merchants).
var ReadModelTables = []string{"balances", "movements"}

// ReadModel is the projection of the pool events onto the read tables, giving exactly the rows
// the repository writes in each append transaction: a movement's row (with its idempotency key) from
// its event (the key derived with domain.KeyOf, a withdrawal's description with
// domain.DefaultDescription, the status of a deposit or withdrawal CONFIRMED as the domain
// records it, a debit's or credit's payment amount the magnitude of the movement, as the
// inputs give it), and per pool the last balance, settings and stream version, the movement
// counts, and updated_at the time of the last event. Its SQL names the tables without a schema
// (search_path), so that a rebuild writes shadow tables.
type ReadModel struct{}

// Name implements projection.Projector.
func (ReadModel) Name() string { return ReadModelName }

// Apply implements projection.Projector.
func (r ReadModel) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	return r.ApplyBatch(ctx, tx, []projection.Event{ev})
}

// ApplyBatch implements projection.BatchProjector: it loads the rows of the pools the events
// concern, folds the events into them in order, then writes the movements with COPY
// and the pools' rows with one upsert. The events of a pool must come in stream order: one that
// does not follow its pool's version is an error.
func (ReadModel) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	b := newBatch()
	for _, ev := range evs {
		id, err := domain.NewID(events.Meta(ev.Msg).GetCompanyId(), events.Meta(ev.Msg).GetEnvironment())
		if err != nil {
			return fmt.Errorf("pool event %s: %w", ev.ID, err)
		}
		b.pool(id)
	}
	if err := b.load(ctx, tx); err != nil {
		return err
	}
	for _, ev := range evs {
		if err := b.apply(ev); err != nil {
			return fmt.Errorf("pool event %s (%s version %d): %w", ev.ID, ev.StreamID, ev.Version, err)
		}
	}
	return b.flush(ctx, tx)
}

// ReadModelDefinition describes the pool read tables for rebuild and verify; store is the pool
// event store (schema Schema).
func ReadModelDefinition(store *eventstore.Store, schema string) projection.Definition {
	return projection.Definition{Projector: ReadModel{}, Schema: schema, Tables: ReadModelTables,
		Source: projection.StoreSource{Store: store}}
}

// projectedMovement is a movement as its event tells it.
type projectedMovement struct {
	id                       uuid.UUID
	typ                      domain.MovementType
	amount, before, after    money.Amount
	status, txHash, desc     string
	paymentID, merchantID    *string
	merchantName, withdrawal *string
	toAddress                *string
	paymentAmount            *int64
	createdAt, confirmedAt   time.Time
}

// poolRow is a pool's balances row.
type poolRow struct {
	id                                                domain.ID
	balance, threshold, version                       int64
	autoTopUp                                         bool
	movements, deposits, debits, credits, withdrawals int64
	updatedAt                                         time.Time
	touched                                           bool
}

// batch is the state of the pools a batch of events concerns, and the rows it adds.
type batch struct {
	pools     map[domain.ID]*poolRow
	order     []domain.ID
	movements [][]any
}

func newBatch() *batch { return &batch{pools: map[domain.ID]*poolRow{}} }

// pool registers id; a pool without a row starts as a pool before its first event.
func (b *batch) pool(id domain.ID) {
	if _, ok := b.pools[id]; ok {
		return
	}
	b.pools[id] = &poolRow{id: id, threshold: domain.DefaultLowThreshold.Micros()}
	b.order = append(b.order, id)
}

// load reads the rows the pools already have.
func (b *batch) load(ctx context.Context, tx pgx.Tx) error {
	companies, envs := make([]string, len(b.order)), make([]string, len(b.order))
	for i, id := range b.order {
		companies[i], envs[i] = id.CompanyID, id.Environment
	}
	rows, err := tx.Query(ctx, `SELECT company_id, environment, balance, low_threshold, auto_top_up_enabled, version,
            movement_count, deposit_count, debit_count, credit_count, withdrawal_count, updated_at
        FROM balances WHERE (company_id, environment) IN (SELECT * FROM unnest($1::text[], $2::text[]))`, companies, envs)
	if err != nil {
		return fmt.Errorf("loading pools: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r poolRow
		if err := rows.Scan(&r.id.CompanyID, &r.id.Environment, &r.balance, &r.threshold, &r.autoTopUp, &r.version,
			&r.movements, &r.deposits, &r.debits, &r.credits, &r.withdrawals, &r.updatedAt); err != nil {
			return fmt.Errorf("loading pools: %w", err)
		}
		*b.pools[r.id] = r
	}
	return rows.Err()
}

// apply folds one event into its pool's row, and adds its movement and key.
func (b *batch) apply(ev projection.Event) error {
	meta := events.Meta(ev.Msg)
	p := b.pools[domain.ID{CompanyID: meta.GetCompanyId(), Environment: meta.GetEnvironment()}]
	if ev.Version != p.version+1 {
		return fmt.Errorf("pool %s is at version %d", p.id.StreamID(), p.version)
	}
	var (
		m   projectedMovement
		err error
	)
	switch msg := ev.Msg.(type) {
	case *poolv1.PoolDepositReceived:
		m, err = depositMovement(msg)
	case *poolv1.PoolWithdrawalCompleted:
		m, err = withdrawalMovement(msg)
	case *poolv1.PoolDebited:
		m, err = paymentMovement(domain.Debit, meta.GetEventId(), meta.GetOccurredAt().AsTime(),
			paymentFields{msg.GetPaymentId(), msg.GetMerchantId(), msg.GetMerchantName(), msg.GetAmount(),
				msg.GetBalanceBefore(), msg.GetBalanceAfter(), msg.GetTxHash(), msg.GetStatus(), msg.GetDescription(),
				msg.GetConfirmedAt()})
	case *poolv1.PoolCredited:
		m, err = paymentMovement(domain.Credit, meta.GetEventId(), meta.GetOccurredAt().AsTime(),
			paymentFields{msg.GetPaymentId(), msg.GetMerchantId(), msg.GetMerchantName(), msg.GetAmount(),
				msg.GetBalanceBefore(), msg.GetBalanceAfter(), msg.GetTxHash(), msg.GetStatus(), msg.GetDescription(),
				msg.GetConfirmedAt()})
	case *poolv1.PoolSettingsChanged:
		threshold, err := money.Parse(msg.GetLowThreshold())
		if err != nil {
			return fmt.Errorf("low_threshold: %w", err)
		}
		p.threshold, p.autoTopUp = threshold.Micros(), msg.GetAutoTopUpEnabled()
		p.advance(meta.GetOccurredAt().AsTime())
		return nil
	case *poolv1.PoolLowBalance:
		// The alert changes no balance or setting: only the pool's version and updated_at.
		p.advance(meta.GetOccurredAt().AsTime())
		return nil
	default:
		return fmt.Errorf("%w: %T is not a pool event", projection.ErrPermanent, ev.Msg)
	}
	if err != nil {
		return err
	}
	p.advance(m.createdAt)
	p.balance = m.after.Micros()
	p.movements++
	switch m.typ {
	case domain.Deposit:
		p.deposits++
	case domain.Debit:
		p.debits++
	case domain.Credit:
		p.credits++
	case domain.Withdrawal:
		p.withdrawals++
	}
	var confirmedAt *time.Time
	if !m.confirmedAt.IsZero() {
		confirmedAt = &m.confirmedAt
	}
	var paymentID, withdrawalID string
	if m.paymentID != nil {
		paymentID = *m.paymentID
	}
	if m.withdrawal != nil {
		withdrawalID = *m.withdrawal
	}
	// The id goes to COPY as a pgtype.UUID: a uuid.UUID is a driver.Valuer, which pgx encodes
	// through its text form (and a failed binary attempt), which is costly at a rebuild's volume.
	b.movements = append(b.movements, []any{pgtype.UUID{Bytes: m.id, Valid: true}, p.id.CompanyID, p.id.Environment,
		p.movements, string(m.typ), m.amount.Micros(), m.before.Micros(), m.after.Micros(), m.status, m.txHash, m.desc,
		m.paymentID, m.paymentAmount, m.merchantID, m.merchantName, m.withdrawal, m.toAddress, m.createdAt, confirmedAt,
		domain.KeyOf(m.typ, m.txHash, withdrawalID, paymentID)})
	return nil
}

// advance moves the pool to its next version, recorded at at.
func (p *poolRow) advance(at time.Time) {
	p.version++
	p.updatedAt = at
	p.touched = true
}

// flush writes what the batch folded.
func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	if err := b.flushMovements(ctx, tx); err != nil {
		return err
	}
	companies, envs, cols := poolColumns(b.pools, b.order)
	if len(companies) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO balances (company_id, environment, balance, low_threshold, auto_top_up_enabled,
            version, movement_count, deposit_count, debit_count, credit_count, withdrawal_count, updated_at)
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::boolean[], $6::bigint[],
            $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::timestamptz[])
        ON CONFLICT (company_id, environment) DO UPDATE SET balance = EXCLUDED.balance,
            low_threshold = EXCLUDED.low_threshold, auto_top_up_enabled = EXCLUDED.auto_top_up_enabled,
            version = EXCLUDED.version, movement_count = EXCLUDED.movement_count,
            deposit_count = EXCLUDED.deposit_count, debit_count = EXCLUDED.debit_count,
            credit_count = EXCLUDED.credit_count, withdrawal_count = EXCLUDED.withdrawal_count,
            updated_at = EXCLUDED.updated_at`,
		companies, envs, cols.balances, cols.thresholds, cols.autoTopUps, cols.versions, cols.movements,
		cols.deposits, cols.debits, cols.credits, cols.withdrawals, cols.updatedAts)
	if err != nil {
		return fmt.Errorf("writing pools: %w", err)
	}
	return nil
}

// movementTable is the columns of a movements row with their types, in the order of a
// rebuild's rows (COPY, movementColumns) and of a live batch's arrays (insertMovements): one
// list, so that the two writers cannot disagree.
var movementTable = []struct{ name, typ string }{
	{"id", "uuid"}, {"company_id", "text"}, {"environment", "text"}, {"seq", "bigint"}, {"type", "text"},
	{"amount", "bigint"}, {"balance_before", "bigint"}, {"balance_after", "bigint"}, {"status", "text"},
	{"tx_hash", "text"}, {"description", "text"}, {"payment_id", "text"}, {"payment_amount", "bigint"},
	{"merchant_id", "text"}, {"merchant_name", "text"}, {"withdrawal_id", "text"}, {"to_address", "text"},
	{"created_at", "timestamptz"}, {"confirmed_at", "timestamptz"}, {"key", "text"},
}

// movementColumns are the column names of movementTable, for COPY.
var movementColumns, insertMovements = movementStatements()

// movementStatements returns movementTable's column names and the INSERT of one array per
// column ($1 the ids, $2 the companies, …) that a live batch queues.
func movementStatements() (names []string, insert string) {
	arrays := make([]string, len(movementTable))
	for i, c := range movementTable {
		names = append(names, c.name)
		arrays[i] = fmt.Sprintf("$%d::%s[]", i+1, c.typ)
	}
	return names, "INSERT INTO movements (" + strings.Join(names, ", ") + ") SELECT * FROM unnest(" +
		strings.Join(arrays, ", ") + ")"
}

// flushMovements COPYs the batch's movements.
func (b *batch) flushMovements(ctx context.Context, tx pgx.Tx) error {
	if len(b.movements) == 0 {
		return nil
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"movements"}, movementColumns, pgx.CopyFromRows(b.movements)); err != nil {
		return fmt.Errorf("inserting movements: %w", err)
	}
	return nil
}

// poolCols are the balances columns of the touched pools, one array each.
type poolCols struct {
	balances, thresholds, versions                    []int64
	movements, deposits, debits, credits, withdrawals []int64
	autoTopUps                                        []bool
	updatedAts                                        []time.Time
}

// poolColumns returns the balances rows of the pools of order that events touched.
func poolColumns(pools map[domain.ID]*poolRow, order []domain.ID) (companies, envs []string, c poolCols) {
	for _, id := range order {
		p := pools[id]
		if !p.touched {
			continue
		}
		companies, envs = append(companies, id.CompanyID), append(envs, id.Environment)
		c.balances, c.thresholds, c.versions = append(c.balances, p.balance), append(c.thresholds, p.threshold), append(c.versions, p.version)
		c.autoTopUps, c.updatedAts = append(c.autoTopUps, p.autoTopUp), append(c.updatedAts, p.updatedAt)
		c.movements, c.deposits = append(c.movements, p.movements), append(c.deposits, p.deposits)
		c.debits, c.credits, c.withdrawals = append(c.debits, p.debits), append(c.credits, p.credits), append(c.withdrawals, p.withdrawals)
	}
	return companies, envs, c
}

// NewLoader implements projection.BulkProjector. A rebuild reads the pool events from the
// first one into empty tables: movements are append-only (one row per event), so
// each batch COPYs its own, and the pools' rows, folded in memory from batch to batch (one
// per pool, however many events), are COPYed once at the end.
func (ReadModel) NewLoader() projection.BulkLoader {
	return &loader{pools: map[domain.ID]*poolRow{}}
}

type loader struct {
	pools map[domain.ID]*poolRow
	order []domain.ID
}

// Load implements projection.BulkLoader. It folds into copies of the pools' rows and keeps
// them only once the batch is written, so a batch that fails leaves the loader as it was.
func (l *loader) Load(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	b := newBatch()
	for _, ev := range evs {
		id, err := domain.NewID(events.Meta(ev.Msg).GetCompanyId(), events.Meta(ev.Msg).GetEnvironment())
		if err != nil {
			return fmt.Errorf("pool event %s: %w", ev.ID, err)
		}
		if _, ok := b.pools[id]; ok {
			continue
		}
		if p, ok := l.pools[id]; ok {
			c := *p
			b.pools[id], b.order = &c, append(b.order, id)
		} else {
			b.pool(id)
		}
	}
	for _, ev := range evs {
		if err := b.apply(ev); err != nil {
			return fmt.Errorf("pool event %s (%s version %d): %w", ev.ID, ev.StreamID, ev.Version, err)
		}
	}
	if err := b.flushMovements(ctx, tx); err != nil {
		return err
	}
	for _, id := range b.order {
		if _, ok := l.pools[id]; !ok {
			l.order = append(l.order, id)
		}
		l.pools[id] = b.pools[id]
	}
	return nil
}

var balanceColumns = []string{"company_id", "environment", "balance", "low_threshold", "auto_top_up_enabled",
	"version", "movement_count", "deposit_count", "debit_count", "credit_count", "withdrawal_count", "updated_at"}

// Finish implements projection.BulkLoader: it writes the pools' rows.
func (l *loader) Finish(ctx context.Context, tx pgx.Tx) error {
	companies, envs, c := poolColumns(l.pools, l.order)
	rows := make([][]any, len(companies))
	for i := range companies {
		rows[i] = []any{companies[i], envs[i], c.balances[i], c.thresholds[i], c.autoTopUps[i], c.versions[i],
			c.movements[i], c.deposits[i], c.debits[i], c.credits[i], c.withdrawals[i], c.updatedAts[i]}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"balances"}, balanceColumns, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("writing pools: %w", err)
	}
	return nil
}

func depositMovement(m *poolv1.PoolDepositReceived) (projectedMovement, error) {
	pm, err := baseMovement(domain.Deposit, m.GetMeta().GetEventId(), m.GetMeta().GetOccurredAt().AsTime(),
		m.GetAmount(), m.GetBalanceBefore(), m.GetBalanceAfter())
	if err != nil {
		return pm, err
	}
	pm.txHash, pm.status, pm.desc = m.GetTxHash(), string(domain.Confirmed), m.GetDescription()
	if pm.desc == "" {
		pm.desc = domain.DefaultDescription(domain.Deposit, nil, "")
	}
	pm.confirmedAt, err = timeOr(m.GetConfirmedAt(), m.GetTimestamp())
	return pm, err
}

func withdrawalMovement(m *poolv1.PoolWithdrawalCompleted) (projectedMovement, error) {
	pm, err := baseMovement(domain.Withdrawal, m.GetMeta().GetEventId(), m.GetMeta().GetOccurredAt().AsTime(),
		m.GetAmount(), m.GetBalanceBefore(), m.GetBalanceAfter())
	if err != nil {
		return pm, err
	}
	// The event carries the magnitude; the movement's amount is negative.
	if pm.amount, err = pm.amount.Neg(); err != nil {
		return pm, err
	}
	withdrawalID, toAddress := m.GetWithdrawalId(), m.GetToAddress()
	pm.txHash, pm.status = m.GetTxHash(), string(domain.Confirmed)
	pm.desc = domain.DefaultDescription(domain.Withdrawal, nil, toAddress)
	pm.withdrawal, pm.toAddress = &withdrawalID, &toAddress
	pm.confirmedAt, err = timeOr(m.GetConfirmedAt(), m.GetTimestamp())
	return pm, err
}

// paymentFields are the fields pool.debited and pool.credited share.
type paymentFields struct {
	paymentID, merchantID, merchantName, amount, before, after, txHash, status, desc, confirmedAt string
}

func paymentMovement(t domain.MovementType, eventID string, at time.Time, f paymentFields) (projectedMovement, error) {
	pm, err := baseMovement(t, eventID, at, f.amount, f.before, f.after)
	if err != nil {
		return pm, err
	}
	pm.txHash, pm.status, pm.desc = f.txHash, f.status, f.desc
	pm.paymentID, pm.merchantID, pm.merchantName = &f.paymentID, &f.merchantID, &f.merchantName
	// The pool's inputs (payment.confirmed, treasury.refund_completed) give the payment's
	// amount as the amount moved.
	magnitude := pm.amount.Micros()
	if magnitude < 0 {
		magnitude = -magnitude
	}
	pm.paymentAmount = &magnitude
	if f.confirmedAt != "" {
		if pm.confirmedAt, err = time.Parse(time.RFC3339Nano, f.confirmedAt); err != nil {
			return pm, fmt.Errorf("confirmed_at: %w", err)
		}
	}
	return pm, nil
}

func baseMovement(t domain.MovementType, eventID string, at time.Time, amount, before, after string) (projectedMovement, error) {
	pm := projectedMovement{typ: t, createdAt: at}
	var err error
	if pm.id, err = uuid.Parse(eventID); err != nil {
		return pm, fmt.Errorf("event id: %w", err)
	}
	if pm.amount, err = money.ParseSigned(amount); err != nil {
		return pm, fmt.Errorf("amount: %w", err)
	}
	if pm.before, err = money.ParseSigned(before); err != nil {
		return pm, fmt.Errorf("balance_before: %w", err)
	}
	if pm.after, err = money.ParseSigned(after); err != nil {
		return pm, fmt.Errorf("balance_after: %w", err)
	}
	return pm, nil
}

// timeOr parses s, or fallback when s is empty (events recorded before s existed).
func timeOr(s, fallback string) (time.Time, error) {
	if s == "" {
		s = fallback
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("confirmed_at: %w", err)
	}
	return t, nil
}

var _ projection.BulkProjector = ReadModel{}
