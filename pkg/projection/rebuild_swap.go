package projection

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// lockLive takes the live tables in EXCLUSIVE mode: readers go on reading them, writers wait
// (and, once the swap commits, find the new tables under the same names).
func lockLive(ctx context.Context, tx pgx.Tx, d Definition) error {
	names := make([]string, len(d.Tables))
	for i, t := range d.Tables {
		names[i] = pgx.Identifier{d.Schema, t}.Sanitize()
	}
	_, err := tx.Exec(ctx, `LOCK TABLE `+strings.Join(names, ", ")+` IN EXCLUSIVE MODE`)
	return err
}

// swap replaces the live tables by the shadow ones: foreign keys between the live tables and
// from other tables are re-created on the new tables, owned sequences are handed over, the
// old tables are dropped, and the new ones' extended statistics join them in the live schema.
func swap(ctx context.Context, tx pgx.Tx, d Definition, shadow string) error {
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+pgx.Identifier{d.Schema}.Sanitize()); err != nil {
		return err
	}
	fks, err := foreignKeysOf(ctx, tx, d)
	if err != nil {
		return err
	}
	sh := pgx.Identifier{shadow}.Sanitize()
	if err := giveLiveAccess(ctx, tx, d, sh); err != nil {
		return err
	}
	owned, err := releaseOwnedSequences(ctx, tx, d)
	if err != nil {
		return err
	}
	for _, t := range d.Tables {
		if _, err := tx.Exec(ctx, `DROP TABLE `+pgx.Identifier{d.Schema, t}.Sanitize()+` CASCADE`); err != nil {
			return err
		}
	}
	for _, t := range d.Tables {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+sh+`.`+pgx.Identifier{t}.Sanitize()+` SET SCHEMA `+pgx.Identifier{d.Schema}.Sanitize()); err != nil {
			return err
		}
	}
	for _, o := range owned {
		if _, err := tx.Exec(ctx, `ALTER SEQUENCE `+o.seq+` OWNED BY `+pgx.Identifier{d.Schema, o.table, o.col}.Sanitize()); err != nil {
			return fmt.Errorf("handing sequence %s to the rebuilt %s: %w", o.seq, o.table, err)
		}
	}
	if err := moveStatistics(ctx, tx, d, shadow); err != nil {
		return err
	}
	for _, f := range fks {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+f.table+` ADD CONSTRAINT `+pgx.Identifier{f.name}.Sanitize()+` `+f.def); err != nil {
			return fmt.Errorf("re-creating foreign key %s: %w", f.name, err)
		}
	}
	return nil
}

// foreignKey is a foreign key to re-create after the swap.
type foreignKey struct{ table, name, def string }

// foreignKeysOf returns the foreign keys from and to the live tables of d.
func foreignKeysOf(ctx context.Context, tx pgx.Tx, d Definition) ([]foreignKey, error) {
	rows, err := tx.Query(ctx, `SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
        FROM pg_constraint c
        WHERE c.contype = 'f' AND (c.confrelid = ANY($1::regclass[]) OR c.conrelid = ANY($1::regclass[]))`,
		qualified(d))
	if err != nil {
		return nil, err
	}
	var fks []foreignKey
	var f foreignKey
	_, err = pgx.ForEachRow(rows, []any{&f.table, &f.name, &f.def}, func() error {
		fks = append(fks, f)
		return nil
	})
	return fks, err
}

// giveLiveAccess gives the new tables (in the shadow schema sh) the live ones' owner and
// grants (the service's role, the readers' SELECT): the rebuild may run as the operator,
// default privileges of the live schema do not apply to tables created in the shadow one, and
// a sequence can only be owned by a column of a table with its owner.
func giveLiveAccess(ctx context.Context, tx pgx.Tx, d Definition, sh string) error {
	for _, t := range d.Tables {
		stmts, err := accessOf(ctx, tx, pgx.Identifier{d.Schema, t}.Sanitize(), sh+`.`+pgx.Identifier{t}.Sanitize())
		if err != nil {
			return err
		}
		for _, stmt := range stmts {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("giving the rebuilt %s the live table's owner and grants: %w", t, err)
			}
		}
	}
	return nil
}

// ownedSeq is a sequence owned by a column of a live table.
type ownedSeq struct{ seq, table, col string }

// releaseOwnedSequences lets go the sequences owned by a live column before the drop (or it
// would drop them); swap has them owned by the same column of the new table once it is in the
// live schema (a sequence and its owning table share a schema).
func releaseOwnedSequences(ctx context.Context, tx pgx.Tx, d Definition) ([]ownedSeq, error) {
	var owned []ownedSeq
	for _, t := range d.Tables {
		rows, err := tx.Query(ctx, `SELECT s.oid::regclass::text, a.attname
            FROM pg_depend dep
            JOIN pg_class s ON s.oid = dep.objid AND s.relkind = 'S'
            JOIN pg_attribute a ON a.attrelid = dep.refobjid AND a.attnum = dep.refobjsubid
            WHERE dep.refobjid = $1::regclass AND dep.deptype = 'a'`, pgx.Identifier{d.Schema, t}.Sanitize())
		if err != nil {
			return nil, err
		}
		var seqs []ownedSeq
		o := ownedSeq{table: t}
		if _, err := pgx.ForEachRow(rows, []any{&o.seq, &o.col}, func() error {
			seqs = append(seqs, o)
			return nil
		}); err != nil {
			return nil, err
		}
		for _, s := range seqs {
			if _, err := tx.Exec(ctx, `ALTER SEQUENCE `+s.seq+` OWNED BY NONE`); err != nil {
				return nil, err
			}
			owned = append(owned, s)
		}
	}
	return owned, nil
}

// moveStatistics moves the extended statistics of the shadow tables, created in the shadow
// schema under the live names (whose objects went with the live tables), to the live schema:
// a statistics object stays in its schema when its table moves, and the shadow schema is
// dropped after the swap.
func moveStatistics(ctx context.Context, tx pgx.Tx, d Definition, shadow string) error {
	rows, err := tx.Query(ctx, `SELECT quote_ident(stxname) FROM pg_statistic_ext
        WHERE stxnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) ORDER BY oid`, shadow)
	if err != nil {
		return err
	}
	stats, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	sh := pgx.Identifier{shadow}.Sanitize()
	for _, st := range stats {
		if _, err := tx.Exec(ctx, `ALTER STATISTICS `+sh+`.`+st+` SET SCHEMA `+pgx.Identifier{d.Schema}.Sanitize()); err != nil {
			return fmt.Errorf("moving statistics %s: %w", st, err)
		}
	}
	return nil
}

// accessOf returns the statements that give table target the grants and then the owner of
// table live.
func accessOf(ctx context.Context, tx pgx.Tx, live, target string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT stmt FROM (
            SELECT 0 AS ord, 'GRANT ' || a.privilege_type || ' ON TABLE ' || $2 || ' TO ' ||
                CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END ||
                CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END AS stmt
            FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
            WHERE c.oid = $1::regclass AND a.grantee <> c.relowner
            UNION ALL
            SELECT 1, 'ALTER TABLE ' || $2 || ' OWNER TO ' || quote_ident(pg_get_userbyid(c.relowner))
            FROM pg_class c WHERE c.oid = $1::regclass) s
        ORDER BY ord`, live, target)
	if err != nil {
		return nil, fmt.Errorf("reading the owner and grants of %s: %w", live, err)
	}
	stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reading the owner and grants of %s: %w", live, err)
	}
	// The owner comes last: once it changes, the operator may no longer be allowed to grant.
	return stmts, nil
}

func qualified(d Definition) []string {
	out := make([]string, len(d.Tables))
	for i, t := range d.Tables {
		out[i] = pgx.Identifier{d.Schema, t}.Sanitize()
	}
	return out
}
