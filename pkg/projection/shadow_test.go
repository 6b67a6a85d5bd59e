package projection_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/projection"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// constrainedProjector writes one row per payment into a table with every kind of index a
// rebuild must carry over: a primary key, a deferrable unique constraint, an exclusion
// constraint, a plain and a partial index. As a bulk projector it COPYs its rows.
type constrainedProjector struct{}

func (constrainedProjector) Name() string { return "test_constrained" }

func (constrainedProjector) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	return copyConstrained(ctx, tx, []projection.Event{ev})
}

func (constrainedProjector) NewLoader() projection.BulkLoader { return constrainedLoader{} }

type constrainedLoader struct{}

func (constrainedLoader) Load(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	return copyConstrained(ctx, tx, evs)
}

func (constrainedLoader) Finish(context.Context, pgx.Tx) error { return nil }

func copyConstrained(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	rows := make([][]any, len(evs))
	for i, ev := range evs {
		pc, ok := ev.Msg.(*paymentv1.PaymentCreated)
		if !ok {
			return fmt.Errorf("%w: unexpected %T", projection.ErrPermanent, ev.Msg)
		}
		rows[i] = []any{pc.GetPaymentId(), pc.GetAmount(), ev.Position.Pos}
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"test_constrained"}, []string{"payment_id", "amount", "pos"}, pgx.CopyFromRows(rows))
	return err
}

// queryStrings returns the one text column of every row of sql.
func queryStrings(t *testing.T, db *pgxpool.Pool, sql string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return defs
}

// constraintDefs lists the indexes and constraints of test_constrained, by name.
func constraintDefs(t *testing.T, db *pgxpool.Pool) []string {
	t.Helper()
	return queryStrings(t, db, `
        SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'test_constrained'
        UNION ALL
        SELECT conname || ': ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $2::regclass
        ORDER BY 1`, schema, schema+".test_constrained")
}

// A rebuild builds a table's indexes side by side after the load and attaches those behind
// primary keys and unique constraints: every index and constraint comes back with the same
// name and definition, the exclusion and deferrable ones included, whether the projector
// loads in bulk (all indexes deferred) or not (unique ones created before the load), with one
// index builder or several.
func TestRebuildKeepsEveryIndexAndConstraint(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	if _, err := db.Exec(context.Background(), `CREATE TABLE test_constrained (
            payment_id text PRIMARY KEY,
            amount     text NOT NULL,
            pos        bigint NOT NULL,
            CONSTRAINT test_constrained_pos_key UNIQUE (pos) DEFERRABLE INITIALLY DEFERRED,
            CONSTRAINT test_constrained_amount_excl EXCLUDE USING btree (payment_id WITH =, pos WITH =)
        );
        CREATE INDEX test_constrained_amount_idx ON test_constrained (amount, pos DESC);
        CREATE INDEX test_constrained_big_idx ON test_constrained (pos) WHERE amount <> '0.00'`); err != nil {
		t.Fatal(err)
	}
	store := eventstore.New(db)
	appendPayments(t, store, 0, 40)
	before := constraintDefs(t, db)
	if len(before) != 8 { // 5 indexes, 3 of them behind constraints
		t.Fatalf("test table has %d indexes and constraints: %v", len(before), before)
	}
	bulk := projection.Definition{Projector: constrainedProjector{}, Schema: schema, Tables: []string{"test_constrained"},
		Source: projection.StoreSource{Store: store}}
	plain := bulk
	plain.Projector = applyOnly{constrainedProjector{}}
	for _, c := range []struct {
		name     string
		def      projection.Definition
		builders int
	}{{"bulk, 2 builders", bulk, 0}, {"bulk, 1 builder", bulk, 1}, {"bulk, 4 builders", bulk, 4}, {"plain", plain, 0}} {
		res, err := projection.Rebuild(context.Background(), db, c.def, projection.RebuildOptions{BatchSize: 7, IndexBuilders: c.builders})
		if err != nil || res.Events != 40 {
			t.Fatalf("%s: rebuild: %+v %v", c.name, res, err)
		}
		if after := constraintDefs(t, db); !slices.Equal(before, after) {
			t.Errorf("%s: after the rebuild:\n%v\nbefore:\n%v", c.name, after, before)
		}
		var n int
		if err := db.QueryRow(context.Background(), `SELECT count(DISTINCT payment_id) FROM test_constrained`).Scan(&n); err != nil || n != 40 {
			t.Fatalf("%s: %d rows (%v)", c.name, n, err)
		}
	}
	// The constraints are enforced on the rebuilt table.
	if _, err := db.Exec(context.Background(), `INSERT INTO test_constrained (payment_id, amount, pos)
        SELECT payment_id, amount, pos + 1000000 FROM test_constrained LIMIT 1`); err == nil {
		t.Error("a duplicate primary key was accepted after the rebuild")
	}
}

// applyOnly hides a projector's bulk loader.
type applyOnly struct{ p constrainedProjector }

func (a applyOnly) Name() string { return a.p.Name() }

func (a applyOnly) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	return a.p.Apply(ctx, tx, ev)
}

// statisticsDefs lists the extended statistics objects of test_constrained (schema-qualified
// name, definition, statistics target) and its generated columns.
func statisticsDefs(t *testing.T, db *pgxpool.Pool) []string {
	t.Helper()
	return queryStrings(t, db, `
        SELECT s.stxnamespace::regnamespace::text || '.' || s.stxname || ': ' || pg_get_statisticsobjdef(s.oid) ||
            ' target ' || coalesce(s.stxstattarget::int, -1)
        FROM pg_statistic_ext s WHERE s.stxrelid = $1::regclass
        UNION ALL
        SELECT a.attname || ' GENERATED ' || pg_get_expr(d.adbin, d.adrelid)
        FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = $1::regclass AND a.attgenerated = 's'
        ORDER BY 1`, schema+".test_constrained")
}

// A rebuild keeps a table's extended statistics objects (multi-column with one or two chosen
// kinds, with all kinds and a statistics target, on an expression) under their names in the live schema,
// and its generated columns generated: the projector's COPY leaves them out and the rebuilt
// rows get them computed, and rows written after the swap too.
func TestRebuildKeepsStatisticsAndGeneratedColumns(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ctx := context.Background()
	if _, err := db.Exec(ctx, `CREATE TABLE test_constrained (
            payment_id text PRIMARY KEY,
            amount     text NOT NULL,
            pos        bigint NOT NULL,
            payment_no bigint GENERATED ALWAYS AS (hashtextextended(payment_id, 0)) STORED
        );
        CREATE STATISTICS test_constrained_no_stats (dependencies) ON payment_no, payment_id FROM test_constrained;
        CREATE STATISTICS test_constrained_pos_stats ON amount, pos FROM test_constrained;
        ALTER STATISTICS test_constrained_pos_stats SET STATISTICS 500;
        CREATE STATISTICS test_constrained_two_stats (ndistinct, mcv) ON amount, payment_id FROM test_constrained;
        CREATE STATISTICS test_constrained_expr_stats ON (lower(amount)) FROM test_constrained`); err != nil {
		t.Fatal(err)
	}
	store := eventstore.New(db)
	appendPayments(t, store, 0, 40)
	before := statisticsDefs(t, db)
	if len(before) != 5 {
		t.Fatalf("test table has %d statistics objects and generated columns: %v", len(before), before)
	}
	bulk := projection.Definition{Projector: constrainedProjector{}, Schema: schema, Tables: []string{"test_constrained"},
		Source: projection.StoreSource{Store: store}}
	plain := bulk
	plain.Projector = applyOnly{constrainedProjector{}}
	for _, c := range []struct {
		name string
		def  projection.Definition
	}{{"bulk", bulk}, {"plain", plain}, {"bulk again", bulk}} {
		if res, err := projection.Rebuild(ctx, db, c.def, projection.RebuildOptions{BatchSize: 7}); err != nil || res.Events != 40 {
			t.Fatalf("%s: rebuild: %+v %v", c.name, res, err)
		}
		if after := statisticsDefs(t, db); !slices.Equal(before, after) {
			t.Errorf("%s: after the rebuild:\n%v\nbefore:\n%v", c.name, after, before)
		}
		if diffs, _, err := projection.Verify(ctx, db, c.def, projection.RebuildOptions{BatchSize: 7}); err != nil || len(diffs) != 0 {
			t.Fatalf("%s: verify: %v %+v", c.name, err, diffs)
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO test_constrained (payment_id, amount, pos) VALUES ('late', '1.00', 1000)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM test_constrained WHERE payment_no = hashtextextended(payment_id, 0)`).
		Scan(&n); err != nil || n != 41 {
		t.Fatalf("%d rows with their generated payment_no, want 41 (%v)", n, err)
	}
	// ANALYZE fills the statistics objects the rebuilt table carries.
	if _, err := db.Exec(ctx, `ANALYZE test_constrained`); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_statistic_ext s JOIN pg_statistic_ext_data d ON d.stxoid = s.oid
        WHERE s.stxrelid = $1::regclass`, schema+".test_constrained").Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d statistics objects analysed, want 4 (%v)", n, err)
	}
}

// accessDefs lists the owner of test_constrained and of its sequence, and the table's grants.
func accessDefs(t *testing.T, db *pgxpool.Pool) []string {
	t.Helper()
	return queryStrings(t, db, `
        SELECT 'owner ' || pg_get_userbyid(c.relowner) || ' of ' || c.relname FROM pg_class c
        WHERE c.oid = $1::regclass OR c.oid = pg_get_serial_sequence($2, 'n')::regclass
        UNION ALL
        SELECT 'grant ' || a.privilege_type || ' to ' || pg_get_userbyid(a.grantee)
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
        WHERE c.oid = $1::regclass AND a.grantee <> c.relowner
        ORDER BY 1`, schema+".test_constrained", schema+".test_constrained")
}

// A rebuild run by the operator (here a superuser) gives the rebuilt table the live one's owner
// (the service's role, which goes on writing it), its grants (the readers' SELECT), and its
// serial sequence (issue 16 item 3: each service owns its tables, others only read them).
func TestRebuildKeepsOwnerAndGrants(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ctx := context.Background()
	conn, err := db.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = pg.Bootstrap(ctx, conn.Conn()) // the service roles
	conn.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `CREATE TABLE test_constrained (
            payment_id text PRIMARY KEY, amount text NOT NULL, pos bigint NOT NULL, n bigserial);
        ALTER TABLE test_constrained OWNER TO payplat_payments;
        GRANT SELECT ON test_constrained TO payplat_gateway;
        GRANT SELECT, INSERT ON test_constrained TO payplat_pool`); err != nil {
		t.Fatal(err)
	}
	store := eventstore.New(db)
	appendPayments(t, store, 0, 10)
	before := accessDefs(t, db)
	if len(before) != 5 {
		t.Fatalf("before the rebuild: %v", before)
	}
	def := projection.Definition{Projector: constrainedProjector{}, Schema: schema, Tables: []string{"test_constrained"},
		Source: projection.StoreSource{Store: store}}
	if res, err := projection.Rebuild(ctx, db, def, projection.RebuildOptions{}); err != nil || res.Events != 10 {
		t.Fatalf("rebuild: %+v %v", res, err)
	}
	if after := accessDefs(t, db); !slices.Equal(before, after) {
		t.Errorf("after the rebuild:\n%v\nbefore:\n%v", after, before)
	}
}
