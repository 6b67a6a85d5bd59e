package loadgen

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Counts are what the read tables show of the tenants' payments: rows CONFIRMED in
// payments.payments, DEBIT movements in pool.movements and PAYMENT entries in
// merchant.merchant_ledger. A lifecycle is fully projected when it has all three.
type Counts struct {
	Confirmed, Debits, Credits int64
}

// Min is the number of lifecycles the counts can account for fully.
func (c Counts) Min() int64 { return min(c.Confirmed, c.Debits, c.Credits) }

// Sub is c minus base.
func (c Counts) Sub(base Counts) Counts {
	return Counts{c.Confirmed - base.Confirmed, c.Debits - base.Debits, c.Credits - base.Credits}
}

func (c Counts) String() string {
	return fmt.Sprintf("%d payments CONFIRMED, %d pool DEBITs, %d ledger PAYMENTs", c.Confirmed, c.Debits, c.Credits)
}

const countsQuery = `
        WITH t AS (SELECT * FROM unnest($1::text[], $2::text[]) AS t(company_id, environment))
        SELECT
          (SELECT count(*) FROM payments.payments p JOIN t USING (company_id, environment)
            WHERE p.tenant_id = hashtextextended(t.company_id || '/' || t.environment, 0)
            AND p.public_status = 'CONFIRMED'),
          (SELECT count(*) FROM pool.movements m JOIN t USING (company_id, environment)
            WHERE m.pool_id = hashtextextended(t.company_id || '/' || t.environment, 0) AND m.type = 'DEBIT'),
          (SELECT count(*) FROM merchant.merchant_ledger l
            WHERE l.merchant_id = ANY($3::uuid[]) AND l.type = 'PAYMENT')`

// ReadCounts counts the tenants' rows in the three read tables (one statement, one snapshot;
// each count walks an index on the tenant's columns).
func ReadCounts(ctx context.Context, db *pgxpool.Pool, tenants []Tenant) (Counts, error) {
	companies, envs, merchants := tenantKeys(tenants)
	var c Counts
	err := db.QueryRow(ctx, countsQuery,
		companies, envs, merchants).Scan(&c.Confirmed, &c.Debits, &c.Credits)
	if err != nil {
		return Counts{}, fmt.Errorf("counting the read tables: %w", err)
	}
	return c, nil
}

func tenantKeys(tenants []Tenant) (companies, envs, merchants []string) {
	for _, t := range tenants {
		companies, envs = append(companies, t.CompanyID), append(envs, t.Environment)
		for _, m := range t.Merchants {
			merchants = append(merchants, m.ID)
		}
	}
	return companies, envs, merchants
}

// WaitProjected waits until the read tables show want lifecycles of the tenants fully projected
// beyond base, and returns the start of the poll that saw it. Every `every` it first looks up
// the payments of tail (the last ones published; Projected, a few index lookups) and, only once
// all of them are fully projected, counts the three tables (ReadCounts, which walks every row of
// the tenants): polling stays cheap beside the load it measures. check, when set, runs before
// each poll and ends the wait with its error (a dead letter, say, means the counts never get
// there).
func WaitProjected(ctx context.Context, db *pgxpool.Pool, tenants []Tenant, base Counts, want int64, tail []Payment,
	every time.Duration, check func(ctx context.Context) error) (time.Time, error) {
	var last Counts
	tail = slices.Clone(tail)
	for {
		if check != nil {
			if err := check(ctx); err != nil {
				return time.Time{}, fmt.Errorf("%w (projected so far: %s)", err, last)
			}
		}
		seen, err := Projected(ctx, db, tail)
		if err != nil {
			return time.Time{}, err
		}
		slices.Sort(seen)
		for _, i := range slices.Backward(seen) {
			tail = slices.Delete(tail, i, i+1)
		}
		if len(tail) == 0 {
			at := time.Now()
			c, err := ReadCounts(ctx, db, tenants)
			if err != nil {
				return time.Time{}, err
			}
			if last = c.Sub(base); last.Min() >= want {
				return at, nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%d lifecycles wanted, %d of the last published not projected, counted so far: %s: %w",
				want, len(tail), last, ctx.Err())
		case <-time.After(every):
		}
	}
}

// KeepTail appends p to tail and keeps at least the last n (at most 2n): collect WaitProjected's tail with it in
// Options.OnConfirmed.
func KeepTail(tail []Payment, p Payment, n int) []Payment {
	if len(tail) >= 2*n {
		tail = append(tail[:0], tail[len(tail)-n+1:]...)
	}
	return append(tail, p)
}

// LagTracker measures, for each payment handed to Track, the time from the publish of its
// payment.confirmed until the read tables show it fully projected: its payments row CONFIRMED,
// its pool DEBIT movement (found through the pool's idempotency key debit:<payment id>) and its
// merchant ledger PAYMENT entry (found through its source key payment:<payment id>). Run polls
// the payments still outstanding with one indexed query (Projected); a payment's lag is the
// start of the first poll whose snapshot shows all three, so it is an upper bound, at most one
// pause plus one query time above the real one. LowerLags gives the other end: the start of
// the last poll that did not show the payment projected (zero when none looked), so that the
// real lag of each payment, and each percentile of them, lies between the two.
//
// The poller must not load the machine it measures: SampleEvery tracks one payment in so many,
// and the pause between polls grows to twice the last query's duration when that is longer
// than Interval, so that polling never keeps a database backend busy more than a third of the
// time however far behind the projections fall.
type LagTracker struct {
	// Interval is the shortest pause between polls (default 15 ms).
	Interval time.Duration
	// SampleEvery tracks one payment in SampleEvery (default 1: every payment).
	SampleEvery int

	mu          sync.Mutex
	offered     int
	outstanding map[Payment]*pending
	lags, lows  []time.Duration
}

// pending is a tracked payment not yet seen fully projected: when its payment.confirmed was
// published, and the start of the last poll that found it not projected (at or before that
// poll's snapshot, so the lag it gives is still a lower bound).
type pending struct {
	published, missed time.Time
}

// Track registers a payment whose payment.confirmed was published at.
func (l *LagTracker) Track(p Payment, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offered++
	if l.SampleEvery > 1 && l.offered%l.SampleEvery != 1 {
		return
	}
	if l.outstanding == nil {
		l.outstanding = map[Payment]*pending{}
	}
	l.outstanding[p] = &pending{published: at}
}

// Outstanding is the number of tracked payments not yet seen fully projected.
func (l *LagTracker) Outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.outstanding)
}

// Lags returns the lags measured so far (their upper bounds), sorted.
func (l *LagTracker) Lags() []time.Duration { return l.sorted(&l.lags) }

// LowerLags returns the lower bounds of the lags measured so far, sorted.
func (l *LagTracker) LowerLags() []time.Duration { return l.sorted(&l.lows) }

func (l *LagTracker) sorted(ds *[]time.Duration) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(*ds)
	slices.Sort(out)
	return out
}

// Run polls until ctx ends or, once done is closed (no more payments will be tracked), no
// payment is outstanding.
func (l *LagTracker) Run(ctx context.Context, db *pgxpool.Pool, done <-chan struct{}) error {
	every := l.Interval
	if every <= 0 {
		every = 15 * time.Millisecond
	}
	projected := func(ctx context.Context, ps []Payment) ([]int, error) { return Projected(ctx, db, ps) }
	finished := false
	for {
		select {
		case <-done:
			finished = true
		default:
		}
		start := time.Now()
		if err := l.poll(ctx, projected); err != nil {
			return err
		}
		pause := max(every, 2*time.Since(start))
		if finished && l.Outstanding() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d payments not fully projected: %w", l.Outstanding(), ctx.Err())
		case <-time.After(pause):
		}
	}
}

// poll asks projected (Projected, on the read tables) which outstanding payments are fully
// projected, and records the lags of those that are.
func (l *LagTracker) poll(ctx context.Context, projected func(context.Context, []Payment) ([]int, error)) error {
	l.mu.Lock()
	batch := make([]Payment, 0, len(l.outstanding))
	for p := range l.outstanding {
		batch = append(batch, p)
	}
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	at := time.Now()
	seen, err := projected(ctx, batch)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	done := make([]bool, len(batch))
	for _, i := range seen {
		done[i] = true
	}
	for i, p := range batch {
		t := l.outstanding[p]
		if !done[i] {
			t.missed = at
			continue
		}
		l.lags = append(l.lags, at.Sub(t.published))
		l.lows = append(l.lows, max(0, t.missed.Sub(t.published)))
		delete(l.outstanding, p)
	}
	return nil
}

// Projected returns the indexes in ps of the payments the read tables show fully projected (one
// statement, one snapshot, primary-key and unique-index lookups only).
func Projected(ctx context.Context, db *pgxpool.Pool, ps []Payment) ([]int, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var companies, envs, merchants, ids []string
	for _, p := range ps {
		companies, envs = append(companies, p.CompanyID), append(envs, p.Environment)
		merchants, ids = append(merchants, p.MerchantID), append(ids, p.PaymentID)
	}
	// Planned at each poll (an unnamed statement), not once: a plan cached while the read tables
	// were nearly empty scans them whole once they have grown, until autovacuum's first ANALYZE
	// of them (a minute or more) invalidates it, and the poller then loads the machine it
	// measures (a paced part run on its own, on fresh tables, saw lags of 28 s so).
	rows, err := db.Query(ctx, projectedQuery, pgx.QueryExecModeExec, companies, envs, merchants, ids)
	if err != nil {
		return nil, fmt.Errorf("looking the payments up in the read tables: %w", err)
	}
	var seen []int
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			rows.Close()
			return nil, err
		}
		seen = append(seen, i-1)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("looking the payments up in the read tables: %w", err)
	}
	return seen, nil
}

// projectedQuery returns the ordinal (from 1) of each payment that is fully projected. Each
// check is a scalar subquery on a primary or unique key, which the planner runs per payment as
// an index lookup: written as EXISTS, the semi-joins it plans on freshly loaded tables (no
// statistics yet) scan whole tables on every poll. A payment is found by its
// tenant's key, tenant_id (the generated column of payments.payments, migration 3003: its
// expression here), which leads the primary key; a pool movement by its pool's key, pool_id
// (the generated column of pool.movements, migration 02003), which leads the pool's unique
// index on the idempotency key.
const projectedQuery = `
        SELECT k.i FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[]) WITH ORDINALITY
            AS k(company_id, environment, merchant_id, payment_id, i)
        WHERE (SELECT p.status FROM payments.payments p
                WHERE p.tenant_id = hashtextextended(k.company_id || '/' || k.environment, 0)
                AND p.payment_id = k.payment_id
                AND p.company_id = k.company_id AND p.environment = k.environment) = 'CONFIRMED'
          AND (SELECT m.type FROM pool.movements m
                WHERE m.pool_id = hashtextextended(k.company_id || '/' || k.environment, 0)
                AND m.key = 'debit:' || k.payment_id
                AND m.company_id = k.company_id AND m.environment = k.environment) = 'DEBIT'
          AND (SELECT le.type FROM merchant.merchant_ledger le WHERE le.merchant_id = k.merchant_id
                AND le.source_key = 'payment:' || k.payment_id) = 'PAYMENT'`

// Percentile returns the q-quantile (0 < q ≤ 1) of sorted durations, nearest rank.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
