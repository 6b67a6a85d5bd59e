package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/api/client"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/natsauth"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
	"github.com/payplat/platform/services/ctl/commands"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

// The issue-7 proofs, against the real stack: the operator CLI (payplat-ctl) runs in process
// with the stack's credentials, everything else is the five service binaries and nats-server.

// ctl runs payplat-ctl with the stack's DATABASE_URL, NATS_URL, the operator's NATS_CREDS,
// GATEWAY_URL and ADMIN_TOKEN.
func (s *stack) ctl(args ...string) (stdout, stderr string, err error) {
	env := map[string]string{"DATABASE_URL": s.creds.DatabaseURL, "NATS_URL": s.creds.NATSURL,
		"NATS_CREDS": s.natsKeys.SeedFile(natsauth.Operator), "GATEWAY_URL": s.url, "ADMIN_TOKEN": s.creds.AdminToken}
	var out, errOut bytes.Buffer
	root := commands.NewRoot(commands.Options{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errOut})
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// verifyClean fails the test unless `projections verify <name>` finds no difference.
func (s *stack) verifyClean(name string) {
	s.t.Helper()
	out, stderr, err := s.ctl("projections", "verify", name)
	if err != nil || !strings.Contains(out, name+": ") || !strings.Contains(out, " 0 differing rows") {
		s.t.Fatalf("projections verify %s: %v\n%s%s", name, err, out, stderr)
	}
}

// rebuild runs `projections rebuild <name>` and fails the test unless it succeeds.
func (s *stack) rebuild(name string) {
	s.t.Helper()
	out, stderr, err := s.ctl("projections", "rebuild", name)
	if err != nil || !strings.Contains(out, "rebuilt "+name+": ") {
		s.t.Fatalf("projections rebuild %s: %v\n%s%s", name, err, out, stderr)
	}
}

// db connects to the stack's database (every schema, qualified in the queries).
func (s *stack) db() *pgxpool.Pool {
	s.t.Helper()
	db, err := pgxpool.New(context.Background(), s.creds.DatabaseURL)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(db.Close)
	return db
}

// count runs a count query.
func count(t testing.TB, db *pgxpool.Pool, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// drained returns nil once every consumer has nothing pending or unacknowledged and then the
// relays have published every event of the merchant and pool event stores. The relays are
// looked at last: a consumer that applies its last message meanwhile appends an event that the
// relay has yet to publish, which a look taken before would miss.
func (s *stack) drained(db *pgxpool.Pool) error {
	ctx := context.Background()
	streams := s.js.ListStreams(ctx)
	var names []string
	for info := range streams.Info() {
		names = append(names, info.Config.Name)
	}
	if err := streams.Err(); err != nil {
		return err
	}
	for _, name := range names {
		st, err := s.js.Stream(ctx, name)
		if err != nil {
			return err
		}
		cons := st.ListConsumers(ctx)
		for ci := range cons.Info() {
			if ci.NumPending > 0 || ci.NumAckPending > 0 {
				return fmt.Errorf("consumer %s/%s: %d pending, %d awaiting ack", name, ci.Name, ci.NumPending, ci.NumAckPending)
			}
		}
		if err := cons.Err(); err != nil {
			return err
		}
	}
	for stream, schema := range map[string]string{"MERCHANTS": "merchant", "POOL": "pool"} {
		st, err := s.js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		var stored int64
		if err := db.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.events`).Scan(&stored); err != nil {
			return err
		}
		if int64(info.State.Msgs) < stored {
			return fmt.Errorf("stream %s holds %d messages of the %d events in %s.events", stream, info.State.Msgs, stored, schema)
		}
	}
	return nil
}

// tryPublish is publish for goroutines other than the test's: it returns the error.
func (s *stack) tryPublish(msg proto.Message) error {
	m, err := eventMsg(msg, events.Meta(msg).GetEventId())
	if err != nil {
		return err
	}
	_, err = s.js.PublishMsg(context.Background(), m)
	return err
}

// txHash is a fresh 32-byte transaction hash.
func txHash() string {
	return "0x" + strings.ReplaceAll(uuid.NewString()+uuid.NewString(), "-", "")
}

func treasuryDeposit(companyID, amount string) *treasuryv1.TreasuryDepositDetected {
	return &treasuryv1.TreasuryDepositDetected{Meta: meta(companyID, "test"), Amount: amount, TxHash: txHash(),
		FromAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", DetectedAt: time.Now().UTC().Format(time.RFC3339)}
}

// simulatePayment runs a simulated payment through the gateway and returns its id.
func (s *stack) simulatePayment(key, merchantID, amount string) string {
	s.t.Helper()
	r, err := s.partner(key).SimulatePaymentWithResponse(bg, nil,
		client.SimulatePaymentJSONRequestBody{MerchantId: merchantID, Amount: amount}, idempotent())
	ok(s.t, r, err)
	return r.JSON201.Payment.PaymentId
}

// diffLine returns the verify output line for a row only on side ("live" or "rebuilt") of
// table that contains every one of want, or "".
func diffLine(out, side, table string, want ...string) string {
	prefix := map[string]string{"live": "- ", "rebuilt": "+ "}[side] + "only in the " + side + " table " + table + ": "
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			return line
		}
	}
	return ""
}

// After a mixed load through the real stack (merchants, status changes, wallet and pool
// deposits from the bus and the dashboard, simulated payments), verify finds the merchant,
// pool and payments read models equal to their sources; a corrupted row of each is reported
// (exit status 1, the row on both sides) and a rebuild repairs it.
func TestOperatorsVerifyFindsAndRebuildRepairsCorruptedRows(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	companyID := s.creds.Company.ID
	db := s.db()

	shop, shopWallet := s.createMerchant(key, "Corner Shop")
	kiosk, _ := s.createMerchant(key, "Kiosk")
	frozen, _ := s.createMerchant(key, "Night Market")
	s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+kiosk+"/status", key, map[string]any{"status": "PAUSED"}), http.StatusOK)
	s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+kiosk+"/status", key, map[string]any{"status": "ACTIVE"}), http.StatusOK)
	s.must(s.call(http.MethodPatch, "/api/v1/admin/merchants/"+frozen+"/status", "Bearer "+s.creds.AdminToken,
		map[string]any{"status": "FROZEN"}), http.StatusOK)

	s.publish(treasuryDeposit(companyID, "150"))
	s.publish(treasuryDeposit(companyID, "20.5"))
	s.must(s.call(http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", key, map[string]any{"amount": "10"}), http.StatusCreated)
	s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: meta(companyID, "test"), MerchantId: shop,
		WalletAddress: shopWallet, Amount: "7.25", TxHash: txHash(), DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	var payments []string
	for i, m := range []string{shop, kiosk, shop} {
		payments = append(payments, s.simulatePayment(key, m, fmt.Sprintf("%d.50", 30+i)))
	}

	eventually(t, func() error {
		if n := count(t, db, `SELECT count(*) FROM payments.payments WHERE status = 'CONFIRMED'`); n != 3 {
			return fmt.Errorf("%d payments confirmed", n)
		}
		// 3 deposits, 3 debits.
		if n := count(t, db, `SELECT count(*) FROM pool.movements`); n != 6 {
			return fmt.Errorf("%d pool movements", n)
		}
		// 1 wallet deposit, 3 payment credits.
		if n := count(t, db, `SELECT count(*) FROM merchant.merchant_ledger`); n != 4 {
			return fmt.Errorf("%d merchant ledger entries", n)
		}
		return s.drained(db)
	})
	for _, p := range []string{"merchants", "pool", "payments"} {
		s.verifyClean(p)
	}

	ctx := context.Background()
	corrupt := func(sql string, args ...any) {
		t.Helper()
		tag, err := db.Exec(ctx, sql, args...)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s: %v (%d rows)", sql, err, tag.RowsAffected())
		}
	}
	corrupt(`UPDATE merchant.merchants SET name = 'Tampered Shop' WHERE id = $1`, shop)
	corrupt(`UPDATE pool.balances SET balance = balance + 1 WHERE company_id = $1 AND environment = 'test'`, companyID)
	corrupt(`UPDATE payments.payments SET amount_micros = 1 WHERE payment_id = $1`, payments[1])

	for _, c := range []struct {
		projection, table string
		live, rebuilt     []string
	}{
		{"merchants", "merchants", []string{`"id":"` + shop + `"`, `"name":"Tampered Shop"`}, []string{`"id":"` + shop + `"`, `"name":"Corner Shop"`}},
		// 150 + 20.5 + 10 - 30.5 - 31.5 - 32.5 = 86.00, stored in micros.
		{"pool", "balances", []string{`"company_id":"` + companyID + `"`, `"balance":86000001`}, []string{`"company_id":"` + companyID + `"`, `"balance":86000000`}},
		{"payments", "payments", []string{`"payment_id":"` + payments[1] + `"`, `"amount_micros":1,`}, []string{`"payment_id":"` + payments[1] + `"`, `"amount_micros":31500000`}},
	} {
		out, stderr, err := s.ctl("projections", "verify", c.projection)
		var exit *commands.ExitError
		if !errors.As(err, &exit) || exit.Code != 1 {
			t.Fatalf("verify %s after corrupting a row: %v, want exit status 1\n%s%s", c.projection, err, out, stderr)
		}
		if diffLine(out, "live", c.table, c.live...) == "" || diffLine(out, "rebuilt", c.table, c.rebuilt...) == "" ||
			!strings.Contains(out, c.projection+": ") || !strings.Contains(out, " 2 differing rows") {
			t.Errorf("verify %s does not name the corrupted row (want %v / %v):\n%s", c.projection, c.live, c.rebuilt, out)
		}
		s.rebuild(c.projection)
		s.verifyClean(c.projection)
	}

	// The repaired rows are what the API serves.
	r := s.must(s.call(http.MethodGet, "/api/v1/management/merchants/"+shop+"/transactions", key, nil), http.StatusOK)
	if r.body["merchant_name"] != "Corner Shop" {
		t.Errorf("merchant after the rebuild: %s", r)
	}
	if r := s.must(s.call(http.MethodGet, "/api/v1/management/pool/balance", key, nil), http.StatusOK); r.body["balance"] != "86.00" {
		t.Errorf("pool balance after the rebuild: %s", r)
	}
	eventually(t, func() error {
		r := s.must(s.call(http.MethodGet, "/api/v1/management/payments?limit=100", key, nil), http.StatusOK)
		ps, _ := r.body["payments"].([]any)
		for _, p := range ps {
			if p := p.(map[string]any); p["payment_id"] == payments[1] && p["amount"] == "31.50" && p["status"] == "CONFIRMED" {
				return nil
			}
		}
		return fmt.Errorf("payments after the rebuild: %s", r)
	})
	// The live consumers go on after the swap: a new payment lands in the rebuilt tables.
	late := s.simulatePayment(key, kiosk, "1.00")
	eventually(t, func() error {
		if n := count(t, db, `SELECT count(*) FROM payments.payments WHERE payment_id = $1 AND status = 'CONFIRMED'`, late); n != 1 {
			return fmt.Errorf("the payment after the rebuild is not confirmed")
		}
		if n := count(t, db, `SELECT count(*) FROM pool.movements WHERE payment_id = $1`, late); n != 1 {
			return fmt.Errorf("%d pool debits of the payment after the rebuild", n)
		}
		if n := count(t, db, `SELECT count(*) FROM merchant.merchant_ledger WHERE payment_id = $1`, late); n != 1 {
			return fmt.Errorf("%d ledger entries of the payment after the rebuild", n)
		}
		return s.drained(db)
	})
	for _, p := range []string{"merchants", "pool", "payments"} {
		s.verifyClean(p)
	}
}

// loadStats counts what the load generator produced.
type loadStats struct {
	payments, treasuryDeposits, simulatedDeposits, statusChanges atomic.Int64
	iterations                                                   atomic.Int64
	mu                                                           sync.Mutex
	errs                                                         []string
}

func (l *loadStats) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

// Rebuilds of payments, pool and merchants while simulated payments, treasury deposits,
// dashboard deposits and status changes keep flowing: every rebuild succeeds, afterwards each
// table equals a from-scratch build, and every catalogue event the load produced was delivered
// to the partner exactly once (the delivery log holds one row per event, the endpoint saw no
// webhook id twice): the rebuilds sent nothing again.
func TestOperatorsRebuildUnderLoadSendsNoWebhookTwice(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rcv := newReceiver(t)
	key := s.creds.Keys.SKTest
	companyID := s.creds.Company.ID
	db := s.db()
	s.configureWebhooks(key, rcv)

	shop, _ := s.createMerchant(key, "Corner Shop")
	kiosk, _ := s.createMerchant(key, "Kiosk")
	toggled, _ := s.createMerchant(key, "Toggle Store")
	// The pool starts just above its low threshold (100.00): the load takes it below and back
	// above again and again, so low-balance alerts are part of what must not be sent twice.
	s.publish(treasuryDeposit(companyID, "103"))
	eventually(t, func() error {
		if r := s.call(http.MethodGet, "/api/v1/management/pool/balance", key, nil); r.body["balance"] != "103.00" {
			return fmt.Errorf("pool balance: %s", r)
		}
		return nil
	})

	var load loadStats
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		merchants := []string{shop, kiosk}
		statuses := []string{"PAUSED", "ACTIVE"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body, _ := json.Marshal(map[string]any{"merchant_id": merchants[i%2], "amount": "2.00"})
			if st, err := post(s.url+"/api/v1/dashboard/payments/simulate", key, body); err != nil || st != http.StatusCreated {
				load.fail("simulate payment: %d %v", st, err)
			} else {
				load.payments.Add(1)
			}
			if err := s.tryPublish(treasuryDeposit(companyID, "1.5")); err != nil {
				load.fail("treasury deposit: %v", err)
			} else {
				load.treasuryDeposits.Add(1)
			}
			if i%3 == 2 {
				if st, err := post(s.url+"/api/v1/dashboard/pool/simulate-deposit", key, []byte(`{"amount":"1"}`)); err != nil || st != http.StatusCreated {
					load.fail("simulate deposit: %d %v", st, err)
				} else {
					load.simulatedDeposits.Add(1)
				}
			}
			if i%4 == 3 {
				body, _ := json.Marshal(map[string]any{"status": statuses[(i/4)%2]})
				req, _ := http.NewRequest(http.MethodPatch, s.url+"/api/v1/management/merchants/"+toggled+"/status", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("x-api-key", key)
				if resp, err := benchClient.Do(req); err != nil {
					load.fail("status change: %v", err)
				} else {
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						load.fail("status change: %d", resp.StatusCode)
					} else {
						load.statusChanges.Add(1)
					}
				}
			}
			load.iterations.Add(1)
		}
	}()
	stopLoad := sync.OnceFunc(func() { close(stop); <-loadDone })
	t.Cleanup(stopLoad)

	// Some load first, so that every rebuild has events to read and live writers to race.
	eventually(t, func() error {
		if n := load.iterations.Load(); n < 10 {
			return fmt.Errorf("%d load iterations", n)
		}
		return nil
	})
	var during int64
	for round := 0; round < 10 && (round < 2 || during < 10); round++ {
		before := load.iterations.Load()
		for _, p := range []string{"payments", "pool", "merchants"} {
			s.rebuild(p)
		}
		// Store-fed tables are written in the append transaction: they equal their source
		// at any instant, even under load.
		s.verifyClean("pool")
		s.verifyClean("merchants")
		during += load.iterations.Load() - before
	}
	if during < 10 {
		t.Fatalf("the load made only %d iterations during the rebuilds", during)
	}
	stopLoad()
	load.mu.Lock()
	if len(load.errs) > 0 {
		t.Errorf("the load failed during the rebuilds: %s", strings.Join(load.errs, "; "))
	}
	load.mu.Unlock()
	// The swaps take their locks in the writers' order: no live writer lost a deadlock to them.
	if out := s.out.String(); strings.Contains(out, "deadlock detected") {
		t.Errorf("a live writer deadlocked with a rebuild:\n%s", out)
	}
	payments, deposits := load.payments.Load(), 1+load.treasuryDeposits.Load()+load.simulatedDeposits.Load()
	t.Logf("load: %d payments, %d treasury and %d dashboard deposits, %d status changes, %d iterations during rebuilds",
		payments, load.treasuryDeposits.Load(), load.simulatedDeposits.Load(), load.statusChanges.Load(), during)

	eventually(t, func() error {
		if n := count(t, db, `SELECT count(*) FROM payments.payments WHERE company_id = $1 AND status = 'CONFIRMED'`, companyID); n != payments {
			return fmt.Errorf("%d of %d payments confirmed", n, payments)
		}
		if n := count(t, db, `SELECT count(*) FROM pool.movements WHERE company_id = $1`, companyID); n != payments+deposits {
			return fmt.Errorf("%d pool movements, want %d", n, payments+deposits)
		}
		if n := count(t, db, `SELECT count(*) FROM merchant.merchant_ledger`); n != payments {
			return fmt.Errorf("%d merchant ledger entries, want %d", n, payments)
		}
		return s.drained(db)
	})
	for _, p := range []string{"payments", "pool", "merchants"} {
		s.verifyClean(p)
	}
	checkLoadgenMeasures(t, db, companyID, payments)

	// Expected catalogue events: three per payment, one per deposit, and one low-balance alert
	// per crossing of the threshold from at or above to below (read from the rebuilt and
	// verified movements).
	var threshold int64
	if err := db.QueryRow(context.Background(), `SELECT low_threshold FROM pool.balances WHERE company_id = $1 AND environment = 'test'`,
		companyID).Scan(&threshold); err != nil {
		t.Fatal(err)
	}
	crossings := count(t, db, `SELECT count(*) FROM pool.movements WHERE company_id = $1 AND environment = 'test'
        AND balance_before >= $2 AND balance_after < $2`, companyID, threshold)
	if crossings == 0 {
		t.Logf("the load never took the pool below its threshold")
	}
	want := map[string]int64{"payment.created": payments, "payment.processing": payments, "payment.confirmed": payments,
		"pool.deposit_received": deposits, "pool.low_balance": crossings}
	var total int64
	for _, n := range want {
		total += n
	}
	eventually(t, func() error {
		rows, err := db.Query(context.Background(), `SELECT event_type, count(*), count(*) FILTER (WHERE status = 'SUCCESS')
            FROM webhooks.deliveries WHERE company_id = $1 GROUP BY event_type`, companyID)
		if err != nil {
			return err
		}
		defer rows.Close()
		got := map[string]int64{}
		for rows.Next() {
			var ev string
			var n, ok int64
			if err := rows.Scan(&ev, &n, &ok); err != nil {
				return err
			}
			if n != ok {
				return fmt.Errorf("%d of %d %s deliveries succeeded", ok, n, ev)
			}
			got[ev] = n
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for ev, n := range want {
			if got[ev] != n {
				return fmt.Errorf("%d %s deliveries in the log, want %d (log %v)", got[ev], ev, n, got)
			}
		}
		if len(got) != len(want) && !(crossings == 0 && len(got) == len(want)-1) {
			return fmt.Errorf("unexpected deliveries in the log: %v", got)
		}
		rcv.mu.Lock()
		received := len(rcv.got)
		rcv.mu.Unlock()
		if int64(received) != total {
			return fmt.Errorf("the endpoint received %d webhooks, want %d", received, total)
		}
		return nil
	})
	if n := count(t, db, `SELECT count(*) FROM (SELECT event_id FROM webhooks.deliveries GROUP BY endpoint_id, event_id HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d events have more than one delivery", n)
	}
	logs := s.must(s.call(http.MethodGet, "/api/v1/dashboard/webhooks/logs?event_type=pool.deposit_received&limit=100", key, nil), http.StatusOK)
	if entries, _ := logs.body["logs"].([]any); int64(len(entries)) != min(deposits, 100) {
		t.Errorf("the delivery log API shows %d pool.deposit_received deliveries, want %d", len(entries), min(deposits, 100))
	}
	rcv.mu.Lock()
	seen := map[string]string{}
	for _, d := range rcv.got {
		if d.id == "" || !d.valid {
			t.Errorf("%s webhook with id %q, valid signature %v", d.event, d.id, d.valid)
		}
		if prev, ok := seen[d.id]; ok {
			t.Errorf("webhook %s (%s, first %s) delivered twice", d.id, d.event, prev)
		}
		seen[d.id] = d.event
	}
	rcv.mu.Unlock()
}

// deadLetter is one entry of `dlq list --json`.
func (s *stack) deadLetters(consumer string) []commands.DeadLetterReport {
	s.t.Helper()
	out, stderr, err := s.ctl("dlq", "list", "--json", "--consumer", consumer)
	if err != nil {
		s.t.Fatalf("dlq list: %v\n%s%s", err, out, stderr)
	}
	var listed struct {
		DeadLetters []commands.DeadLetterReport `json:"dead_letters"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		s.t.Fatalf("dlq list --json: %v\n%s", err, out)
	}
	return listed.DeadLetters
}

// ledger returns the merchant's ledger entries through the API, newest first.
func (s *stack) ledger(key, merchantID string) []map[string]any {
	s.t.Helper()
	r := s.must(s.call(http.MethodGet, "/api/v1/management/merchants/"+merchantID+"/transactions", key, nil), http.StatusOK)
	txs, _ := r.body["transactions"].([]any)
	out := make([]map[string]any, 0, len(txs))
	for _, tx := range txs {
		out = append(out, tx.(map[string]any))
	}
	return out
}

// A chain watcher publishes a merchant-wallet deposit with an invalid amount: the merchant
// ledger dead-letters it with the reason and goes on. The operator finds it with `dlq list`,
// re-drives a corrected copy (same event id) from a protojson file, and the ledger shows the
// deposit exactly once; a second re-drive is refused, and the corrected event published again
// by its team changes nothing.
func TestOperatorsDeadLetterRedriveIsAppliedOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	companyID := s.creds.Company.ID
	db := s.db()
	merchantID, wallet := s.createMerchant(key, "Corner Shop")
	const consumer = "merchant-ledger-wallets"

	bad := &merchantwalletv1.MerchantWalletDepositDetected{Meta: meta(companyID, "test"), MerchantId: merchantID,
		WalletAddress: wallet, Amount: "-5", TxHash: txHash(), DetectedAt: time.Now().UTC().Format(time.RFC3339)}
	s.publish(bad)
	subject, _ := events.SubjectFor(bad)
	var dl commands.DeadLetterReport
	eventually(t, func() error {
		dls := s.deadLetters(consumer)
		if len(dls) != 1 {
			return fmt.Errorf("%d dead letters of %s", len(dls), consumer)
		}
		dl = dls[0]
		return nil
	})
	if dl.OriginalSubject != subject || dl.OriginalMsgID != bad.Meta.EventId || dl.OriginalStream != "MERCHANT_WALLETS" ||
		!strings.Contains(dl.Reason, "amount") || !strings.Contains(dl.Preview, `{"merchant_id":"`+merchantID+`"`) {
		t.Errorf("dead letter %+v", dl)
	}
	out, _, err := s.ctl("dlq", "list")
	if err != nil {
		t.Fatal(err)
	}
	seq := strconv.FormatUint(dl.Seq, 10)
	if !strings.Contains(out, seq) || !strings.Contains(out, consumer) || !strings.Contains(out, subject) ||
		!strings.Contains(out, shortReason(dl.Reason)) {
		t.Errorf("dlq list:\n%s", out)
	}
	if n := len(s.ledger(key, merchantID)); n != 0 {
		t.Fatalf("the invalid deposit made %d ledger entries", n)
	}

	fixed := proto.Clone(bad).(*merchantwalletv1.MerchantWalletDepositDetected)
	fixed.Amount = "5"
	data, err := protojson.Marshal(fixed)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, stderr, err := s.ctl("dlq", "redrive", seq, "--data-file", file, "--content-type", events.ContentTypeJSON); err != nil ||
		!strings.Contains(out, "1 dead letter(s) re-driven") {
		t.Fatalf("dlq redrive: %v\n%s%s", err, out, stderr)
	}
	eventually(t, func() error {
		l := s.ledger(key, merchantID)
		if len(l) != 1 || l[0]["type"] != "DEPOSIT" || l[0]["amount"] != "5.00" || l[0]["balance_after"] != "5.00" {
			return fmt.Errorf("ledger %v", l)
		}
		return nil
	})
	if dls := s.deadLetters(consumer); len(dls) != 0 {
		t.Errorf("dead letters left after the redrive: %+v", dls)
	}
	if _, _, err := s.ctl("dlq", "redrive", seq); err == nil || !strings.Contains(err.Error(), "no dead letter") {
		t.Errorf("second redrive of %s: %v", seq, err)
	}

	// The team publishes its corrected event again (a new message id: JetStream stores it),
	// then a new deposit behind it on the same stream.
	s.publishAs(fixed, uuid.NewString())
	next := &merchantwalletv1.MerchantWalletDepositDetected{Meta: meta(companyID, "test"), MerchantId: merchantID,
		WalletAddress: wallet, Amount: "1", TxHash: txHash(), DetectedAt: time.Now().UTC().Format(time.RFC3339)}
	s.publish(next)
	eventually(t, func() error {
		if l := s.ledger(key, merchantID); len(l) < 2 {
			return fmt.Errorf("ledger %v", l)
		}
		return s.drained(db)
	})
	l := s.ledger(key, merchantID)
	if len(l) != 2 || l[0]["amount"] != "1.00" || l[0]["balance_after"] != "6.00" || l[1]["amount"] != "5.00" {
		t.Errorf("ledger after the corrected event was published again: %v", l)
	}
	if n := count(t, db, `SELECT count(*) FROM merchant.merchant_ledger WHERE merchant_id = $1 AND type = 'DEPOSIT' AND tx_hash = $2`,
		merchantID, bad.TxHash); n != 1 {
		t.Errorf("%d DEPOSIT entries for the re-driven event", n)
	}
	if dls := s.deadLetters(consumer); len(dls) != 0 {
		t.Errorf("dead letters after the repeat: %+v", dls)
	}
	s.verifyClean("merchants")
}

// shortReason is the reason as `dlq list` prints it (at most 80 characters).
func shortReason(r string) string {
	if rs := []rune(r); len(rs) > 80 {
		return string(rs[:80])
	}
	return r
}

// checkLoadgenMeasures checks the load generator's measuring queries (the ones its benchmarks
// and `loadgen` wait on) against the read tables the stack filled with n confirmed payments of
// the company in test: each payment is seen fully projected (payments row, pool DEBIT looked up
// by pool_id and key, ledger PAYMENT), and the counts are n each.
func checkLoadgenMeasures(t *testing.T, db *pgxpool.Pool, companyID string, n int64) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, `SELECT payment_id, merchant_id FROM payments.payments
        WHERE tenant_id = hashtextextended($1::text || '/test', 0) AND company_id = $1 AND environment = 'test'
            AND status = 'CONFIRMED' ORDER BY payment_id`, companyID)
	if err != nil {
		t.Fatal(err)
	}
	var (
		ps        []loadgen.Payment
		merchants = map[string]bool{}
	)
	for rows.Next() {
		p := loadgen.Payment{CompanyID: companyID, Environment: "test"}
		if err := rows.Scan(&p.PaymentID, &p.MerchantID); err != nil {
			t.Fatal(err)
		}
		ps, merchants[p.MerchantID] = append(ps, p), true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if int64(len(ps)) != n {
		t.Fatalf("%d confirmed payments, want %d", len(ps), n)
	}
	seen, err := loadgen.Projected(ctx, db, ps)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(ps) {
		t.Fatalf("the load generator sees %d of %d payments fully projected", len(seen), len(ps))
	}
	tenant := loadgen.Tenant{CompanyID: companyID, Environment: "test"}
	for m := range merchants {
		tenant.Merchants = append(tenant.Merchants, loadgen.Merchant{ID: m})
	}
	c, err := loadgen.ReadCounts(ctx, db, []loadgen.Tenant{tenant})
	if err != nil {
		t.Fatal(err)
	}
	if c.Confirmed != n || c.Debits != n || c.Credits != n {
		t.Fatalf("the load generator counts %s, want %d of each", c, n)
	}
}
