package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
)

// Result is the verdict of one invariant: what it counted, and every violation with the ids
// that break it.
type Result struct {
	Name       string
	Counts     string
	Violations []string
}

// OK tells whether the invariant held.
func (r Result) OK() bool { return len(r.Violations) == 0 }

func (r *Result) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Checker reads what the platform holds once it is quiet, and holds it to the Book.
type Checker struct {
	db       *pgxpool.Pool
	js       jetstream.JetStream
	tenants  []Tenant
	book     *Book
	receiver *Receiver
	faults   []Fault
	poison   []Poison
	ctl      func(ctx context.Context, args ...string) ([]byte, error)
	// logs are the services' log files.
	logs []string
}

// Check runs every invariant.
func (c *Checker) Check(ctx context.Context) []Result {
	lifecycles, treasury, wallet, ops := c.book.Snapshot()
	st, err := c.load(ctx)
	if err != nil {
		return []Result{{Name: "read the platform's state", Violations: []string{err.Error()}}}
	}
	return []Result{
		c.checkPayments(st, lifecycles, ops),
		c.checkSettlements(st),
		c.checkPools(st, treasury, ops),
		c.checkMerchants(st, wallet),
		c.checkStores(ctx),
		c.checkWebhooks(ctx, st),
		c.checkHTTP(st, ops),
		c.checkProjections(ctx),
		c.checkDeadLetters(ctx),
		c.checkPermissions(),
	}
}

// checkPermissions: no service was refused a NATS subject through the faults. Each runs with
// only its natsauth user's permissions; one it lacks (for example on a path only recovery
// takes) shows up in its log.
func (c *Checker) checkPermissions() Result {
	r := Result{Name: "no service refused a NATS subject"}
	refused := 0
	for _, path := range c.logs {
		data, err := os.ReadFile(path)
		if err != nil {
			r.violate("reading %s: %v", path, err)
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "Permissions Violation") {
				refused++
				if refused <= 5 {
					r.violate("%s: %s", filepath.Base(path), line)
				}
			}
		}
	}
	r.Counts = fmt.Sprintf("%d service logs, %d refusals", len(c.logs), refused)
	return r
}

// state is what the read tables of the run's companies hold.
type state struct {
	companies []string
	payments  map[string]payment    // by payment id
	debits    map[string][]int64    // pool DEBIT amounts by payment id
	credits   map[string][]int64    // ledger PAYMENT amounts by payment id
	movements map[string][]movement // by company, in seq order
	ledgers   map[string][]entry    // by merchant id, in seq order
	merchants map[string]merchantRow
	balances  map[string]int64 // pool balance by company
}

type payment struct {
	company, status string
	micros          int64
}

type movement struct {
	seq                                 int64
	kind                                string
	amount, before, after               int64
	txHash, paymentID, withdrawalID, id string
}

type entry struct {
	seq                   int64
	kind                  string
	amount, before, after int64
	paymentID, txHash     string
}

type merchantRow struct {
	company, email, status string
	balance                int64
}

func (c *Checker) load(ctx context.Context) (*state, error) {
	st := &state{payments: map[string]payment{}, debits: map[string][]int64{}, credits: map[string][]int64{},
		movements: map[string][]movement{}, ledgers: map[string][]entry{}, merchants: map[string]merchantRow{},
		balances: map[string]int64{}}
	for _, t := range c.tenants {
		st.companies = append(st.companies, t.CompanyID)
	}
	queries := []struct {
		sql  string
		scan func(pgx.Rows) error
	}{
		{`SELECT payment_id, company_id, status, amount_micros FROM payments.payments
            WHERE company_id = ANY($1) AND environment = 'test'`, func(r pgx.Rows) error {
			var id string
			var p payment
			if err := r.Scan(&id, &p.company, &p.status, &p.micros); err != nil {
				return err
			}
			if _, dup := st.payments[id]; dup {
				return fmt.Errorf("payment %s has two rows", id)
			}
			st.payments[id] = p
			return nil
		}},
		{`SELECT company_id, seq, type, amount, balance_before, balance_after, tx_hash, coalesce(payment_id, ''),
                 coalesce(withdrawal_id, ''), id::text
            FROM pool.movements WHERE company_id = ANY($1) AND environment = 'test' ORDER BY company_id, seq`,
			func(r pgx.Rows) error {
				var company string
				var m movement
				if err := r.Scan(&company, &m.seq, &m.kind, &m.amount, &m.before, &m.after, &m.txHash, &m.paymentID,
					&m.withdrawalID, &m.id); err != nil {
					return err
				}
				st.movements[company] = append(st.movements[company], m)
				if m.kind == "DEBIT" {
					st.debits[m.paymentID] = append(st.debits[m.paymentID], m.amount)
				}
				return nil
			}},
		{`SELECT company_id, balance FROM pool.balances WHERE company_id = ANY($1) AND environment = 'test'`,
			func(r pgx.Rows) error {
				var company string
				var b int64
				if err := r.Scan(&company, &b); err != nil {
					return err
				}
				st.balances[company] = b
				return nil
			}},
		{`SELECT id::text, company_id, email, status, balance_micros FROM merchant.merchants
            WHERE company_id = ANY($1) AND environment = 'test'`, func(r pgx.Rows) error {
			var id string
			var m merchantRow
			if err := r.Scan(&id, &m.company, &m.email, &m.status, &m.balance); err != nil {
				return err
			}
			st.merchants[id] = m
			return nil
		}},
		{`SELECT l.merchant_id::text, l.seq, l.type, l.amount_micros, l.balance_before_micros, l.balance_after_micros,
                 l.payment_id, l.tx_hash
            FROM merchant.merchant_ledger l JOIN merchant.merchants m ON m.id = l.merchant_id
            WHERE m.company_id = ANY($1) AND m.environment = 'test' ORDER BY l.merchant_id, l.seq`,
			func(r pgx.Rows) error {
				var merchant string
				var e entry
				if err := r.Scan(&merchant, &e.seq, &e.kind, &e.amount, &e.before, &e.after, &e.paymentID, &e.txHash); err != nil {
					return err
				}
				st.ledgers[merchant] = append(st.ledgers[merchant], e)
				if e.kind == "PAYMENT" {
					st.credits[e.paymentID] = append(st.credits[e.paymentID], e.amount)
				}
				return nil
			}},
	}
	for _, q := range queries {
		rows, err := c.db.Query(ctx, q.sql, st.companies)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			if err := q.scan(rows); err != nil {
				rows.Close()
				return nil, err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// checkPayments: every lifecycle the load saw acknowledged is in payments once, with the status
// of its last acknowledged event; every 2xx payment request's payment is there.
func (c *Checker) checkPayments(st *state, lifecycles []Lifecycle, ops []HTTPOp) Result {
	r := Result{Name: "payments: every acknowledged lifecycle once, with its final status"}
	acked, statuses := 0, map[string]int{}
	for _, l := range lifecycles {
		if l.Acked == "" {
			continue
		}
		acked++
		statuses[l.Acked]++
		p, ok := st.payments[l.PaymentID]
		switch {
		case !ok:
			r.violate("lifecycle %s (acknowledged %s) is not in payments", l.PaymentID, l.Acked)
		case p.status != l.Acked:
			r.violate("lifecycle %s acknowledged %s shows %s", l.PaymentID, l.Acked, p.status)
		case p.micros != l.Micros:
			r.violate("lifecycle %s amount %d shows %d", l.PaymentID, l.Micros, p.micros)
		case p.company != c.tenants[l.Tenant].CompanyID:
			r.violate("lifecycle %s shows under company %s", l.PaymentID, p.company)
		}
	}
	requested := 0
	for _, o := range ops {
		want := map[string]string{"simulate_payment": "CONFIRMED", "process_payment": "CREATED"}[o.Kind]
		if want == "" || o.Status/100 != 2 {
			continue
		}
		requested++
		if p, ok := st.payments[o.ResultID]; !ok || p.status != want {
			r.violate("%s answered %d for payment %s, which shows %q", o.Kind, o.Status, o.ResultID, p.status)
		}
	}
	r.Counts = fmt.Sprintf("%d lifecycles acknowledged (%v), %d payment requests answered 2xx, %d payments rows",
		acked, statuses, requested, len(st.payments))
	return r
}

// checkSettlements: exactly one pool DEBIT and one ledger PAYMENT per confirmed payment, of its
// amount, and none for any other.
func (c *Checker) checkSettlements(st *state) Result {
	r := Result{Name: "settlements: one pool DEBIT and one ledger PAYMENT per confirmed payment"}
	confirmed := 0
	for id, p := range st.payments {
		if p.status != "CONFIRMED" {
			if len(st.debits[id]) > 0 || len(st.credits[id]) > 0 {
				r.violate("payment %s is %s but has %d DEBITs and %d PAYMENTs", id, p.status, len(st.debits[id]), len(st.credits[id]))
			}
			continue
		}
		confirmed++
		if d := st.debits[id]; len(d) != 1 || d[0] != -p.micros {
			r.violate("confirmed payment %s of %d has pool DEBITs %v", id, p.micros, d)
		}
		if cr := st.credits[id]; len(cr) != 1 || cr[0] != p.micros {
			r.violate("confirmed payment %s of %d has ledger PAYMENTs %v", id, p.micros, cr)
		}
	}
	for id := range st.debits {
		if _, ok := st.payments[id]; !ok {
			r.violate("pool DEBIT for payment %s, which is not in payments", id)
		}
	}
	for id := range st.credits {
		if _, ok := st.payments[id]; !ok {
			r.violate("ledger PAYMENT for payment %s, which is not in payments", id)
		}
	}
	r.Counts = fmt.Sprintf("%d confirmed payments, %d with DEBITs, %d with PAYMENTs", confirmed, len(st.debits), len(st.credits))
	return r
}

// checkChain checks a balance chain: seq increasing (1, 2, 3… when contiguous: a pool's
// movements; a merchant's ledger entries carry the version of the merchant's stream, which its
// other events share), each before the previous after, after = before + amount, the last after
// the final balance and the sum of the amounts.
func checkChain(r *Result, what string, contiguous bool, seqs, amounts, befores, afters []int64, final int64) {
	var sum, prev int64
	for i := range seqs {
		if (contiguous && seqs[i] != int64(i+1)) || (i > 0 && seqs[i] <= seqs[i-1]) {
			r.violate("%s: entry %d has seq %d", what, i+1, seqs[i])
			return
		}
		if befores[i] != prev {
			r.violate("%s: seq %d balance_before %d, previous balance_after %d", what, seqs[i], befores[i], prev)
		}
		if afters[i] != befores[i]+amounts[i] {
			r.violate("%s: seq %d balance_after %d != %d + %d", what, seqs[i], afters[i], befores[i], amounts[i])
		}
		prev = afters[i]
		sum += amounts[i]
	}
	if sum != final || prev != final {
		r.violate("%s: balance %d, sum of movements %d, last balance_after %d", what, final, sum, prev)
	}
}

// checkPools: per pool, balance = deposits − withdrawals − debits + credits with an unbroken
// chain; every acknowledged treasury fact and 2xx simulated deposit recorded exactly once, and
// no movement without a cause (beyond the requests that got no answer).
func (c *Checker) checkPools(st *state, treasury []TreasuryOp, ops []HTTPOp) Result {
	r := Result{Name: "pools: balance = deposits - withdrawals - debits + credits, chained, each fact once"}
	byKey := map[string]int{} // "<company>/<kind>/<key>" -> movements
	types := map[string]int{}
	for _, company := range st.companies {
		ms := st.movements[company]
		var seqs, amounts, befores, afters []int64
		for _, m := range ms {
			seqs, amounts, befores, afters = append(seqs, m.seq), append(amounts, m.amount), append(befores, m.before), append(afters, m.after)
			types[m.kind]++
			switch m.kind {
			case "DEPOSIT":
				byKey[company+"/deposit/"+m.txHash]++
			case "WITHDRAWAL":
				byKey[company+"/withdrawal/"+m.withdrawalID]++
			case "CREDIT":
				byKey[company+"/refund/"+m.paymentID]++
			}
			if (m.kind == "DEBIT" || m.kind == "WITHDRAWAL") != (m.amount < 0) {
				r.violate("pool %s: %s seq %d has amount %d", company, m.kind, m.seq, m.amount)
			}
		}
		checkChain(&r, "pool "+company, true, seqs, amounts, befores, afters, st.balances[company])
	}
	explained := map[string]bool{}
	refunded := map[string]bool{}
	for _, op := range treasury {
		k := st.companies[op.Tenant] + "/" + op.Kind + "/" + op.Key
		if op.Kind == "refund" {
			if refunded[k] {
				continue // a second refund of a payment is the same CREDIT (one per payment)
			}
			refunded[k] = true
		}
		explained[k] = true
		if op.Acked && byKey[k] != 1 {
			r.violate("treasury %s %s acknowledged, recorded %d times", op.Kind, op.Key, byKey[k])
		}
	}
	ambiguousDeposits := 0
	for _, o := range ops {
		if o.Kind != "simulate_deposit" {
			continue
		}
		k := st.companies[o.Tenant] + "/deposit/" + o.TxHash
		switch {
		case o.Status/100 == 2:
			explained[k] = true
			if byKey[k] != 1 {
				r.violate("simulated deposit %s answered %d, recorded %d times", o.ResultID, o.Status, byKey[k])
			}
		case o.Ambiguous():
			ambiguousDeposits++
		}
	}
	unexplained := 0
	for k, n := range byKey {
		if !explained[k] {
			unexplained += n
		}
	}
	if unexplained > ambiguousDeposits {
		r.violate("%d pool movements have no acknowledged cause, more than the %d deposit requests without an answer",
			unexplained, ambiguousDeposits)
	}
	r.Counts = fmt.Sprintf("%d pools, movements %v, %d treasury facts, %d deposits from requests without an answer",
		len(st.movements), types, len(treasury), unexplained)
	return r
}

// checkMerchants: per merchant, balance = sum of its ledger with an unbroken chain; every
// acknowledged wallet fact recorded once.
func (c *Checker) checkMerchants(st *state, wallet []WalletOp) Result {
	r := Result{Name: "merchants: balance = sum of the ledger, chained, each wallet fact once"}
	byTx := map[string]int{}
	entries := 0
	for id, m := range st.merchants {
		es := st.ledgers[id]
		entries += len(es)
		var seqs, amounts, befores, afters []int64
		for _, e := range es {
			seqs, amounts, befores, afters = append(seqs, e.seq), append(amounts, e.amount), append(befores, e.before), append(afters, e.after)
			if e.kind == "DEPOSIT" || e.kind == "WITHDRAWAL" {
				byTx[id+"/"+e.txHash]++
			}
		}
		checkChain(&r, "merchant "+id, false, seqs, amounts, befores, afters, m.balance)
	}
	for _, w := range wallet {
		if n := byTx[w.MerchantID+"/"+w.TxHash]; w.Acked && n != 1 {
			r.violate("wallet %s %s of merchant %s acknowledged, recorded %d times", w.Kind, w.TxHash, w.MerchantID, n)
		}
	}
	r.Counts = fmt.Sprintf("%d merchants, %d ledger entries, %d wallet facts", len(st.merchants), entries, len(wallet))
	return r
}

// checkStores: each event store's stream holds exactly the store's events, in the order the
// relay reads them ((transaction id, position)), each once.
func (c *Checker) checkStores(ctx context.Context) Result {
	r := Result{Name: "event stores: each stream is the store, in order, no gap, no event twice"}
	var counts []string
	for _, s := range []struct{ schema, stream string }{{"merchant", "MERCHANTS"}, {"pool", "POOL"}} {
		rows, err := c.db.Query(ctx, `SELECT event_id::text FROM `+s.schema+`.events ORDER BY tx_id, position`)
		if err != nil {
			r.violate("reading %s.events: %v", s.schema, err)
			continue
		}
		store, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			r.violate("reading %s.events: %v", s.schema, err)
			continue
		}
		msgs, err := readStream(ctx, c.js, s.stream, "")
		if err != nil {
			r.violate("reading %s: %v", s.stream, err)
			continue
		}
		seen := map[string]bool{}
		for i, m := range msgs {
			if seen[m.MsgID] {
				r.violate("%s: event %s twice (seq %d)", s.stream, m.MsgID, m.Seq)
			}
			seen[m.MsgID] = true
			if i < len(store) && store[i] != m.MsgID {
				r.violate("%s: message %d is %s, the store's event %d is %s", s.stream, i+1, m.MsgID, i+1, store[i])
				break
			}
		}
		if len(msgs) != len(store) {
			r.violate("%s holds %d messages, %s.events %d events", s.stream, len(msgs), s.schema, len(store))
		}
		counts = append(counts, fmt.Sprintf("%s %d/%d", s.stream, len(msgs), len(store)))
	}
	r.Counts = strings.Join(counts, ", ") + " (stream/store)"
	return r
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
