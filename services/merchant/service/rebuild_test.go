package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/migrations"
)

// After merchants, status changes and ledger entries, the read tables equal a rebuild from the
// event store; a corrupted balance is reported by verify and repaired by a rebuild, which keeps
// the foreign key of the ledger and serves the same answers afterwards.
func TestMerchantReadTablesMatchARebuildThatRepairsACorruptBalance(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	ms := s.mustCreateN(5, "c1", "test")
	s.mustSetStatus(ms[1], "PAUSED")
	if _, err := s.client.AdminSetStatus(ctx, "", api.SetStatusRequest{MerchantID: ms[2].ID, Status: "FROZEN",
		Reason: "review"}); err != nil {
		t.Fatal(err)
	}
	s.publish(confirmed(ms[0], "pay-1", "12.50"), "")
	s.publish(confirmed(ms[0], "pay-2", "0.25"), "")
	s.waitEntries(ms[0].ID, 2)

	def := adapters.ReadModelDefinition(eventstore.New(s.db), migrations.Schema)
	if diffs, _, err := projection.Verify(ctx, s.db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify of the live tables: %v %+v", err, diffs)
	}
	if _, err := s.db.Exec(ctx, `UPDATE merchants SET balance_micros = 1 WHERE id = $1`, ms[0].ID); err != nil {
		t.Fatal(err)
	}
	diffs, _, err := projection.Verify(ctx, s.db, def, projection.RebuildOptions{})
	if err != nil || len(diffs) != 2 || diffs[0].Table != "merchants" || !strings.Contains(diffs[1].Row, `"balance_micros":12750000`) {
		t.Fatalf("verify of a corrupted balance: %v %+v", err, diffs)
	}
	res, err := projection.Rebuild(ctx, s.db, def, projection.RebuildOptions{})
	if err != nil || res.Events != 9 { // 5 created, 2 status changes, 2 ledger entries
		t.Fatalf("rebuild: %+v %v", res, err)
	}
	if diffs, _, err := projection.Verify(ctx, s.db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the rebuild: %v %+v", err, diffs)
	}
	if n := s.count(`SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'merchant_ledger'::regclass`); n != 1 {
		t.Errorf("merchant_ledger has %d foreign keys after the swap, want 1", n)
	}
	// The service goes on working on the new tables.
	s.publish(confirmed(ms[0], "pay-3", "1.00"), "")
	s.waitEntries(ms[0].ID, 3)
	s.mustSetStatus(ms[1], "ACTIVE")
	if diffs, _, err := projection.Verify(ctx, s.db, def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after more traffic: %v %+v", err, diffs)
	}
}

// Ledger entries applied in batches (many entries of several merchants in one consumer
// transaction, written with set-based statements) leave the read tables a rebuild gives,
// which applies one event at a time; so do a status change and entries mixed in one stream.
func TestLedgerEntriesAppliedInBatchesLeaveTheTablesARebuildGives(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	ms := s.mustCreateN(3, "c1", "test")
	s.mustSetStatus(ms[1], "PAUSED")
	if err := s.svc.Stop(); err != nil {
		t.Fatal(err)
	}
	// Queued while the consumer is down, so that they arrive in batches.
	for i := range 60 {
		m := ms[i%len(ms)]
		s.publish(confirmed(m, fmt.Sprintf("pay-%d", i), fmt.Sprintf("%d.25", i+1)), "")
		if i%7 == 0 {
			s.publish(&merchantwalletv1.MerchantWalletWithdrawalCompleted{Meta: meta("c1", "test"), MerchantId: m.ID,
				WithdrawalId: fmt.Sprintf("w-%d", i), WalletAddress: m.WalletAddress, Amount: "0.5",
				ToAddress: "0xdest", TxHash: fmt.Sprintf("0xw%d", i), CompletedAt: "2026-11-23T10:01:00Z"}, "")
		}
	}
	s.publish(confirmed(ms[0], "pay-0", "1.25"), "") // the same payment again: no second entry
	s.start()
	waitFor(t, func() error {
		if n := s.count(`SELECT count(*) FROM merchant_ledger`); n != 60+9 {
			return errorf("%d ledger entries", n)
		}
		return nil
	})
	s.mustSetStatus(ms[1], "ACTIVE")
	// The rebuild applies runs of ledger entries set-based (ApplyBatch), in batches of any
	// size; one event at a time (Apply) gives the same tables.
	def := adapters.ReadModelDefinition(eventstore.New(s.db), migrations.Schema)
	oneByOne := def
	oneByOne.Projector = applyOnly{adapters.ReadModel{}}
	for _, d := range []projection.Definition{def, oneByOne} {
		for _, size := range []int{1, 7, 0} {
			diffs, res, err := projection.Verify(ctx, s.db, d, projection.RebuildOptions{BatchSize: size})
			if err != nil || len(diffs) != 0 || res.Events != 3+2+60+9 {
				t.Fatalf("verify of the batched ledger (%T, batches of %d): %v %+v %+v", d.Projector, size, err, res, diffs)
			}
		}
	}
	// Each balance is its last entry's balance_after, and the entries chain.
	if n := s.count(`SELECT count(*) FROM merchants m WHERE balance_micros <> (SELECT balance_after_micros
        FROM merchant_ledger l WHERE l.merchant_id = m.id ORDER BY seq DESC LIMIT 1)`); n != 0 {
		t.Fatalf("%d balances differ from their last entry", n)
	}
	if n := s.count(`SELECT count(*) FROM merchant_ledger l JOIN merchant_ledger p
        ON p.merchant_id = l.merchant_id AND p.seq = (SELECT max(seq) FROM merchant_ledger q
            WHERE q.merchant_id = l.merchant_id AND q.seq < l.seq)
        WHERE l.balance_before_micros <> p.balance_after_micros`); n != 0 {
		t.Fatalf("%d entries break the balance chain", n)
	}
}

// applyOnly hides a projector's ApplyBatch: the rebuild applies one event at a time.
type applyOnly struct{ p adapters.ReadModel }

func (a applyOnly) Name() string { return a.p.Name() }

func (a applyOnly) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	return a.p.Apply(ctx, tx, ev)
}
