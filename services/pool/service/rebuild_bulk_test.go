package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
)

// batchOnly hides the read model's bulk loader: a rebuild then applies every batch through
// ApplyBatch, as before bulk loading existed.
type batchOnly struct{ projection.BatchProjector }

// A bulk rebuild (movements COPYed per batch, pools folded in memory across batches, indexes
// built after the load) gives the same tables as the batch-by-batch path and as the live
// tables, and the swapped-in tables carry the live tables' indexes and constraints under their
// names.
func TestBulkRebuildEqualsBatchRebuild(t *testing.T) {
	e := newConsumerEnv(t, 0)
	ctx := context.Background()
	repo := adapters.NewRepository(e.db)
	pools := []domain.ID{newPoolID(t, e.db, "test"), newPoolID(t, e.db, "live"), newPoolID(t, e.db, "live")}
	for round := 0; round < 6; round++ {
		for i, id := range pools {
			facts := []domain.Fact{{Type: domain.Deposit, Key: domain.DepositKey(fmt.Sprintf("0xd%d-%d", i, round)),
				Amount: money.MustParse("100.00"), TxHash: fmt.Sprintf("0xd%d-%d", i, round), ConfirmedAt: time.Now()}}
			for j := 0; j < 3+i; j++ {
				pid := fmt.Sprintf("p-%d-%d-%d", i, round, j)
				facts = append(facts, domain.Fact{Type: domain.Debit, Key: domain.DebitKey(pid),
					Amount: money.MustParse("1.25"), TxHash: "0x" + pid, ConfirmedAt: time.Now(),
					Payment: &domain.PaymentRef{PaymentID: pid, MerchantID: "m", Amount: money.MustParse("1.25")}})
			}
			facts = append(facts, domain.Fact{Type: domain.Withdrawal, Key: domain.WithdrawalKey(fmt.Sprintf("w-%d-%d", i, round)),
				Amount: money.MustParse("2.00"), TxHash: "0xw", WithdrawalID: fmt.Sprintf("w-%d-%d", i, round),
				ToAddress: "0xto", ConfirmedAt: time.Now()})
			recordFacts(t, e.db, repo, id, facts)
		}
	}
	store := eventstore.New(e.db)
	def := adapters.ReadModelDefinition(store, adapters.Schema)
	plain := def
	plain.Projector = batchOnly{adapters.ReadModel{}}
	for _, c := range []struct {
		name string
		def  projection.Definition
	}{{"bulk", def}, {"batch", plain}} {
		for _, size := range []int{1, 7, 0} {
			if diffs, res, err := projection.Verify(ctx, e.db, c.def, projection.RebuildOptions{BatchSize: size}); err != nil || len(diffs) != 0 || res.Events == 0 {
				t.Fatalf("%s verify, batches of %d: %v %+v %+v", c.name, size, err, res, diffs)
			}
		}
	}
	before := indexDefs(t, e.db)
	if _, err := projection.Rebuild(ctx, e.db, def, projection.RebuildOptions{BatchSize: 5}); err != nil {
		t.Fatal(err)
	}
	if after := indexDefs(t, e.db); !slices.Equal(before, after) {
		t.Errorf("indexes after the rebuild:\n%v\nbefore:\n%v", after, before)
	}
	if diffs, _, err := projection.Verify(ctx, e.db, plain, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the rebuild: %v %+v", err, diffs)
	}
}

// indexDefs lists the indexes, constraints and extended statistics of the pool read tables,
// and their columns in order (type, collation, NOT NULL, default or generation expression:
// movements.pool_id, which leads the indexes of movements, must stay generated, and the planner
// must keep the statistics that say it follows from company_id and environment).
func indexDefs(t *testing.T, db *pgxpool.Pool) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT indexdef FROM pg_indexes
        WHERE schemaname = $1 AND tablename = ANY($2) UNION ALL
        SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
        WHERE conrelid = ANY(SELECT (quote_ident($1) || '.' || quote_ident(t))::regclass FROM unnest($2::text[]) t)
        UNION ALL
        SELECT 'statistics ' || stxnamespace::regnamespace::text || '.' || stxname || ' ' || pg_get_statisticsobjdef(oid)
        FROM pg_statistic_ext
        WHERE stxrelid = ANY(SELECT (quote_ident($1) || '.' || quote_ident(t))::regclass FROM unnest($2::text[]) t)
        UNION ALL
        SELECT a.attrelid::regclass::text || ' column ' || a.attnum || ' ' || a.attname || ' ' ||
            format_type(a.atttypid, a.atttypmod) || coalesce(' COLLATE ' || quote_ident(c.collname), '') ||
            CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||
            CASE a.attgenerated WHEN 's' THEN ' GENERATED ' ELSE ' DEFAULT ' END || coalesce(pg_get_expr(d.adbin, d.adrelid), '-')
        FROM pg_attribute a
        LEFT JOIN pg_collation c ON c.oid = a.attcollation
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = ANY(SELECT (quote_ident($1) || '.' || quote_ident(t))::regclass FROM unnest($2::text[]) t)
            AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY 1`, adapters.Schema, adapters.ReadModelTables)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) < 5 {
		t.Fatalf("only %d indexes and constraints: %v", len(defs), defs)
	}
	return defs
}
