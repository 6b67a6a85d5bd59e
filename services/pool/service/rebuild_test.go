package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/service"
)

// After deposits (real and simulated), debits with and without a merchant name, credits,
// withdrawals, settings changes and low-balance crossings, the read tables equal a rebuild
// from the event store alone; a corrupted movement and balance are reported by verify and
// repaired by a rebuild, after which the service goes on recording on the new tables.
func TestPoolReadTablesMatchARebuildThatRepairsCorruptRows(t *testing.T) {
	h := newHarness(t, service.Config{})
	ctx := context.Background()
	// The merchant service's table, where the pool finds the names of the merchants it pays.
	if _, err := h.db().Exec(ctx, `CREATE SCHEMA IF NOT EXISTS merchant;
        CREATE TABLE merchant.merchants (id text PRIMARY KEY, name text NOT NULL);
        INSERT INTO merchant.merchants VALUES ('m-1', 'Blue Bottle Coffee')`); err != nil {
		t.Fatal(err)
	}
	a, b, untouched := newPoolID(t, h.db(), "test"), newPoolID(t, h.db(), "live"), newPoolID(t, h.db(), "test")
	settings := func(req api.UpdateSettingsRequest) { request(t, h, api.SubjectUpdateSettings, req) }
	threshold := func(s string) *string { return &s }
	on, off := true, false

	publish(t, h.js, depositFact(a, "0xa1", "500.00"))
	publish(t, h.js, paymentFact(a, "p1", "60.00"))
	other := paymentFact(a, "p2", "15.25")
	other.MerchantId = "m-2" // no name in the merchant table
	publish(t, h.js, other)
	publish(t, h.js, refundFact(a, "p1", "60.00"))
	publish(t, h.js, withdrawalFact(a, "w1", "100.00"))
	waitMovements(t, h.db(), a, 5)
	settings(api.UpdateSettingsRequest{CompanyID: a.CompanyID, Environment: a.Environment,
		LowThreshold: threshold("450.00"), RequestID: "req-th"}) // 384.75 < 450: crossing
	settings(api.UpdateSettingsRequest{CompanyID: a.CompanyID, Environment: a.Environment, AutoTopUpEnabled: &on})
	request(t, h, api.SubjectSimulateDeposit, api.SimulateDepositRequest{CompanyID: a.CompanyID,
		Environment: a.Environment, Amount: "100.00", RequestID: "sim-1"}) // back above: re-armed
	request(t, h, api.SubjectSimulateDeposit, api.SimulateDepositRequest{CompanyID: a.CompanyID,
		Environment: a.Environment, Amount: "0.000001"})
	publish(t, h.js, paymentFact(a, "p3", "80.00")) // crossing again
	waitMovements(t, h.db(), a, 8)

	publish(t, h.js, depositFact(b, "0xb1", "120.00"))
	publish(t, h.js, paymentFact(b, "p4", "30.00")) // crossing the default 100.00
	waitMovements(t, h.db(), b, 2)
	settings(api.UpdateSettingsRequest{CompanyID: b.CompanyID, Environment: b.Environment,
		LowThreshold: threshold("0.00"), AutoTopUpEnabled: &off})
	// Settings set to what they are on a pool that has no event: no event, and no row.
	settings(api.UpdateSettingsRequest{CompanyID: untouched.CompanyID, Environment: untouched.Environment,
		LowThreshold: threshold("100.00"), AutoTopUpEnabled: &off})

	types := storeTypes(t, h.db(), a)
	if n := count(types, "pool.low_balance"); n != 2 {
		t.Fatalf("pool a: %d low_balance events, want 2 (%v)", n, types)
	}
	rows, _ := h.db().Query(ctx, `SELECT coalesce(merchant_name, '-') FROM movements
        WHERE company_id = $1 AND type = 'DEBIT' ORDER BY payment_id`, a.CompanyID)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(names, ",") != "Blue Bottle Coffee,,Blue Bottle Coffee" {
		t.Fatalf("merchant names of the debits: %q %v", names, err)
	}

	store := eventstore.New(h.db())
	def := adapters.ReadModelDefinition(store, adapters.Schema)
	verifyClean := func(when string) {
		t.Helper()
		if diffs, _, err := projection.Verify(ctx, h.db(), def, projection.RebuildOptions{BatchSize: 4}); err != nil || len(diffs) != 0 {
			t.Fatalf("verify %s: %v %+v", when, err, diffs)
		}
	}
	verifyClean("of the live tables")

	// Corrupt one movement and one balance.
	if _, err := h.db().Exec(ctx, `UPDATE movements SET description = 'tampered' WHERE company_id = $1 AND payment_id = 'p1' AND type = 'DEBIT'`,
		a.CompanyID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db().Exec(ctx, `UPDATE balances SET balance = 1 WHERE company_id = $1`, b.CompanyID); err != nil {
		t.Fatal(err)
	}
	diffs, _, err := projection.Verify(ctx, h.db(), def, projection.RebuildOptions{})
	if err != nil || len(diffs) != 4 {
		t.Fatalf("verify of the corrupted tables: %v %+v", err, diffs)
	}
	got := map[string]string{}
	for _, d := range diffs {
		got[d.Table+"/"+d.Side] = d.Row
	}
	if !strings.Contains(got["balances/live"], `"balance":1,`) || !strings.Contains(got["balances/rebuilt"], `"balance":90000000`) ||
		!strings.Contains(got["movements/live"], `"description":"tampered"`) ||
		!strings.Contains(got["movements/rebuilt"], `"description":"Payment p1 to Blue Bottle Coffee"`) {
		t.Fatalf("verify of the corrupted tables: %+v", diffs)
	}

	total, err := store.Count(ctx, h.db())
	if err != nil {
		t.Fatal(err)
	}
	res, err := projection.Rebuild(ctx, h.db(), def, projection.RebuildOptions{BatchSize: 3})
	if err != nil || res.Events != total || res.Skipped != 0 {
		t.Fatalf("rebuild: %+v %v (store holds %d events)", res, err, total)
	}
	verifyClean("after the rebuild")
	var desc string
	if err := h.db().QueryRow(ctx, `SELECT description FROM movements WHERE company_id = $1 AND payment_id = 'p1' AND type = 'DEBIT'`,
		a.CompanyID).Scan(&desc); err != nil || desc != "Payment p1 to Blue Bottle Coffee" {
		t.Fatalf("repaired description %q %v", desc, err)
	}

	// The service goes on working on the new tables: facts, a repeated fact, commands.
	publish(t, h.js, paymentFact(b, "p5", "10.00"))
	publish(t, h.js, paymentFact(b, "p4", "30.00")) // already recorded
	publish(t, h.js, withdrawalFact(a, "w2", "5.00"))
	ms := waitMovements(t, h.db(), b, 3)
	checkChain(t, h.db(), b, ms)
	checkChain(t, h.db(), a, waitMovements(t, h.db(), a, 9))
	settings(api.UpdateSettingsRequest{CompanyID: a.CompanyID, Environment: a.Environment, AutoTopUpEnabled: &off})
	request(t, h, api.SubjectSimulateDeposit, api.SimulateDepositRequest{CompanyID: a.CompanyID,
		Environment: a.Environment, Amount: "1.00", RequestID: "sim-1"}) // a repeat: nothing new
	verifyClean("after more traffic")
}
