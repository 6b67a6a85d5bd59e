package projection

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// shadowIndex is an index of a live table, to be created on its shadow.
type shadowIndex struct {
	table string
	// ddl creates it; it names its table unqualified, so that it resolves to the shadow
	// table under the build's search_path.
	ddl    string
	unique bool
}

// createShadow creates the shadow schema with an empty copy of each live table (columns,
// defaults, generated columns, check constraints, storage) but without its indexes, and returns
// the indexes still to be built. Filling a table and then building its indexes sorts each index
// once instead of inserting every row into every index as it arrives (random inserts into a
// uuid primary key being the worst). Indexes that the build needs are created at once: the
// unique ones, which the projectors' ON CONFLICT clauses rely on, unless bulk (a BulkLoader
// writes empty tables without looking anything up).
func createShadow(ctx context.Context, db *pgxpool.Pool, d Definition, shadow string, bulk bool) ([]shadowIndex, error) {
	var deferred []shadowIndex
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+shadow+` CASCADE`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+shadow); err != nil {
			return err
		}
		for _, t := range d.Tables {
			live := pgx.Identifier{d.Schema, t}.Sanitize()
			if _, err := tx.Exec(ctx, `CREATE TABLE `+shadow+`.`+pgx.Identifier{t}.Sanitize()+
				` (LIKE `+live+` INCLUDING ALL EXCLUDING INDEXES)`); err != nil {
				return fmt.Errorf("creating the shadow of %s: %w", live, err)
			}
		}
		ixs, err := liveIndexes(ctx, tx, d, shadow)
		if err != nil {
			return err
		}
		var now []shadowIndex
		for _, ix := range ixs {
			if ix.unique && !bulk {
				now = append(now, ix)
			} else {
				deferred = append(deferred, ix)
			}
		}
		return createIndexes(ctx, tx, now)
	})
	return deferred, err
}

// liveIndexes returns the DDL of every index of d's live tables, retargeted at the shadow
// tables, in table order: the indexes behind primary key, unique and exclusion constraints as
// those constraints (same names), the others as indexes (same names).
func liveIndexes(ctx context.Context, tx pgx.Tx, d Definition, shadow string) ([]shadowIndex, error) {
	var out []shadowIndex
	for _, t := range d.Tables {
		target := shadow + "." + pgx.Identifier{t}.Sanitize()
		// pg_get_indexdef names the live table schema-qualified, as quote_ident spells it.
		rows, err := tx.Query(ctx, `SELECT i.indisunique, c.oid IS NOT NULL,
                CASE WHEN c.oid IS NULL THEN pg_get_indexdef(i.indexrelid)
                     ELSE quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid) END,
                quote_ident($2) || '.' || quote_ident($3)
            FROM pg_index i
            LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u', 'x')
            WHERE i.indrelid = $1::regclass
            ORDER BY i.indisprimary DESC, i.indexrelid`, pgx.Identifier{d.Schema, t}.Sanitize(), d.Schema, t)
		if err != nil {
			return nil, fmt.Errorf("reading the indexes of %s: %w", t, err)
		}
		var (
			ix           shadowIndex
			isConstraint bool
			def, live    string
		)
		ix.table = t
		if _, err := pgx.ForEachRow(rows, []any{&ix.unique, &isConstraint, &def, &live}, func() error {
			if isConstraint {
				ix.ddl = `ALTER TABLE ` + target + ` ADD CONSTRAINT ` + def
			} else {
				on := " ON " + live + " USING "
				if !strings.Contains(def, on) {
					return fmt.Errorf("unexpected index definition %q", def)
				}
				ix.ddl = strings.Replace(def, on, " ON "+target+" USING ", 1)
			}
			out = append(out, ix)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("reading the indexes of %s: %w", t, err)
		}
	}
	return out, nil
}

// createIndexes runs ixs on the shadow tables.
func createIndexes(ctx context.Context, tx pgx.Tx, ixs []shadowIndex) error {
	for _, ix := range ixs {
		if _, err := tx.Exec(ctx, ix.ddl); err != nil {
			return fmt.Errorf("indexing the shadow of %s (%s): %w", ix.table, ix.ddl, err)
		}
	}
	return nil
}
