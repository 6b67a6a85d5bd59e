package projection

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// diff returns the rows that are in the live tables but not in the scratch ones, and the
// other way round (multisets: a duplicated row counts).
func diff(ctx context.Context, tx pgx.Tx, d Definition, scratch string) ([]Diff, error) {
	var out []Diff
	for _, t := range d.Tables {
		live := pgx.Identifier{d.Schema, t}.Sanitize()
		built := pgx.Identifier{scratch, t}.Sanitize()
		for _, q := range []struct{ side, a, b string }{{"live", live, built}, {"rebuilt", built, live}} {
			rows, err := tx.Query(ctx, `SELECT row_to_json(x)::text FROM (SELECT * FROM `+q.a+` EXCEPT ALL SELECT * FROM `+q.b+`) x`)
			if err != nil {
				return nil, fmt.Errorf("comparing %s: %w", t, err)
			}
			for rows.Next() {
				var row string
				if err := rows.Scan(&row); err != nil {
					rows.Close()
					return nil, err
				}
				out = append(out, Diff{Table: t, Side: q.side, Row: row})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
