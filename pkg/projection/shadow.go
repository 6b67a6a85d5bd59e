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
	// attach, if set, turns the index ddl built into the constraint it backs (ALTER TABLE
	// … ADD CONSTRAINT … USING INDEX): the index is then built like any other, beside the
	// table's other indexes, and only the attach, which is instant, locks the whole table.
	attach string
	// wholeTable is set for a constraint created as such (exclusion, deferrable): its
	// ALTER TABLE locks the whole table, so it is not built beside the table's other indexes.
	wholeTable bool
}

// createShadow creates the shadow schema with an empty copy of each live table (columns,
// defaults, generated columns, check constraints, storage, extended statistics) but without
// its indexes, and returns the indexes still to be built. Filling a table and then building
// its indexes sorts each index once instead of inserting every row into every index as it
// arrives (random inserts into a uuid primary key being the worst). Indexes that the build
// needs are created at once: the unique ones, which the projectors' ON CONFLICT clauses rely
// on, unless bulk (a BulkLoader writes empty tables without looking anything up).
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
				` (LIKE `+live+` INCLUDING ALL EXCLUDING INDEXES EXCLUDING STATISTICS)`); err != nil {
				return fmt.Errorf("creating the shadow of %s: %w", live, err)
			}
		}
		stats, err := liveStatistics(ctx, tx, d, shadow)
		if err != nil {
			return err
		}
		for _, ddl := range stats {
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return fmt.Errorf("creating the statistics of the shadow tables (%s): %w", ddl, err)
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

// liveStatistics returns the DDL that creates the extended statistics objects of d's live
// tables on the shadow tables, under the same names in the shadow schema; the swap moves them
// to the live schema with their tables. (LIKE … INCLUDING STATISTICS would name them afresh in
// the shadow schema, and dropping that schema after the swap would drop them: the rebuilt
// tables would lose them.)
func liveStatistics(ctx context.Context, tx pgx.Tx, d Definition, shadow string) ([]string, error) {
	var out []string
	for _, t := range d.Tables {
		target := shadow + "." + pgx.Identifier{t}.Sanitize()
		// The kinds are listed unless the object has all of them (or none: one expression),
		// as CREATE STATISTICS reads them; the columns and expressions as PostgreSQL prints them.
		rows, err := tx.Query(ctx, `SELECT quote_ident(s.stxname),
                CASE WHEN cardinality(k.kinds) IN (0, 3) THEN '' ELSE ' (' || array_to_string(k.kinds, ', ') || ')' END,
                pg_get_statisticsobjdef_columns(s.oid), coalesce(s.stxstattarget::int, -1)
            FROM pg_statistic_ext s,
                LATERAL (SELECT coalesce(array_agg(CASE c WHEN 'd' THEN 'ndistinct' WHEN 'f' THEN 'dependencies'
                            ELSE 'mcv' END ORDER BY c), '{}') AS kinds
                        FROM unnest(s.stxkind) c WHERE c IN ('d', 'f', 'm')) k
            WHERE s.stxrelid = $1::regclass
            ORDER BY s.oid`, pgx.Identifier{d.Schema, t}.Sanitize())
		if err != nil {
			return nil, fmt.Errorf("reading the statistics of %s: %w", t, err)
		}
		var (
			name, kinds, columns string
			statTarget           int
		)
		if _, err := pgx.ForEachRow(rows, []any{&name, &kinds, &columns, &statTarget}, func() error {
			out = append(out, `CREATE STATISTICS `+shadow+`.`+name+kinds+` ON `+columns+` FROM `+target)
			if statTarget >= 0 {
				out = append(out, fmt.Sprintf(`ALTER STATISTICS %s.%s SET STATISTICS %d`, shadow, name, statTarget))
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("reading the statistics of %s: %w", t, err)
		}
	}
	return out, nil
}

// liveIndexes returns the DDL of every index of d's live tables, retargeted at the shadow
// tables: the indexes behind primary key, unique and exclusion constraints as those constraints
// (same names), the others as indexes (same names). Table by table, the longest builds come
// first (whole-table indexes before partial ones, then by the live index's size), so that the
// builders taking them in that order finish close together instead of one starting the
// largest last.
func liveIndexes(ctx context.Context, tx pgx.Tx, d Definition, shadow string) ([]shadowIndex, error) {
	var out []shadowIndex
	for _, t := range d.Tables {
		target := shadow + "." + pgx.Identifier{t}.Sanitize()
		// pg_get_indexdef names the live table schema-qualified, as quote_ident spells it.
		// A non-deferrable primary key or unique constraint is rebuilt as its index plus an
		// attach; an exclusion or deferrable constraint as the constraint itself.
		rows, err := tx.Query(ctx, `SELECT i.indisunique, c.oid IS NOT NULL,
                CASE WHEN c.oid IS NULL OR (c.contype IN ('p', 'u') AND NOT c.condeferrable)
                     THEN pg_get_indexdef(i.indexrelid)
                     ELSE quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid) END,
                CASE WHEN c.contype IN ('p', 'u') AND NOT c.condeferrable
                     THEN quote_ident(c.conname) || CASE c.contype WHEN 'p' THEN ' PRIMARY KEY' ELSE ' UNIQUE' END ||
                          ' USING INDEX ' || quote_ident(ic.relname)
                     ELSE '' END,
                quote_ident($2) || '.' || quote_ident($3)
            FROM pg_index i
            JOIN pg_class ic ON ic.oid = i.indexrelid
            LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u', 'x')
            WHERE i.indrelid = $1::regclass
            ORDER BY i.indpred IS NULL DESC, pg_relation_size(i.indexrelid) DESC, i.indexrelid`, pgx.Identifier{d.Schema, t}.Sanitize(), d.Schema, t)
		if err != nil {
			return nil, fmt.Errorf("reading the indexes of %s: %w", t, err)
		}
		var (
			ix           shadowIndex
			isConstraint bool
			def, live    string
			attach       string
		)
		ix.table = t
		if _, err := pgx.ForEachRow(rows, []any{&ix.unique, &isConstraint, &def, &attach, &live}, func() error {
			ix.attach, ix.wholeTable = "", false
			if isConstraint && attach == "" {
				ix.ddl, ix.wholeTable = `ALTER TABLE `+target+` ADD CONSTRAINT `+def, true
			} else {
				if attach != "" {
					ix.attach = `ALTER TABLE ` + target + ` ADD CONSTRAINT ` + attach
				}
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

// createIndexes runs ixs on the shadow tables, one after the other, each attached to its
// constraint once built.
func createIndexes(ctx context.Context, tx pgx.Tx, ixs []shadowIndex) error {
	for _, ix := range ixs {
		if err := buildIndex(ctx, tx, ix); err != nil {
			return err
		}
	}
	return attachIndexes(ctx, tx, ixs)
}

// buildIndex builds ix (without attaching it).
func buildIndex(ctx context.Context, tx pgx.Tx, ix shadowIndex) error {
	if _, err := tx.Exec(ctx, ix.ddl); err != nil {
		return fmt.Errorf("indexing the shadow of %s (%s): %w", ix.table, ix.ddl, err)
	}
	return nil
}

// attachIndexes turns the built indexes of ixs that back a constraint into that constraint.
func attachIndexes(ctx context.Context, tx pgx.Tx, ixs []shadowIndex) error {
	for _, ix := range ixs {
		if ix.attach == "" {
			continue
		}
		if _, err := tx.Exec(ctx, ix.attach); err != nil {
			return fmt.Errorf("constraining the shadow of %s (%s): %w", ix.table, ix.attach, err)
		}
	}
	return nil
}
