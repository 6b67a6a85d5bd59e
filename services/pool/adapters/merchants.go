package adapters

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MerchantDirectory finds merchant names for the payment reference of DEBIT and CREDIT
// movements, since payment.confirmed and treasury.refund_completed carry only the merchant id.
// It reads the merchant service's read table merchant.merchants (columns id or merchant_id,
// and name) when that table exists in the database; where it does not (the merchant service
// runs on another database, or not yet), the name stays empty. Which table shape exists is
// looked up at most every directoryRecheck.
type MerchantDirectory struct {
	mu        sync.Mutex
	checkedAt time.Time
	idColumn  string // "" when no usable table exists
	uuidIDs   bool   // the id column is of type uuid
}

const directoryRecheck = 30 * time.Second

// NewMerchantDirectory returns a directory that discovers the merchant table on first use.
func NewMerchantDirectory() *MerchantDirectory { return &MerchantDirectory{} }

// fillNames sets the merchant name of the new facts of ps that reference a payment without
// one, with one look-up for all of them.
func (d *MerchantDirectory) fillNames(ctx context.Context, tx pgx.Tx, ps []*pending) error {
	var ids []string
	seen := map[string]bool{}
	for _, p := range ps {
		for i, f := range p.facts {
			if p.fresh[i] && f.Payment != nil && f.Payment.MerchantName == "" && f.Payment.MerchantID != "" &&
				!seen[f.Payment.MerchantID] {
				seen[f.Payment.MerchantID] = true
				ids = append(ids, f.Payment.MerchantID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	names, err := d.names(ctx, tx, ids)
	if err != nil || len(names) == 0 {
		return err
	}
	for _, p := range ps {
		for i := range p.facts {
			f := &p.facts[i]
			if p.fresh[i] && f.Payment != nil && f.Payment.MerchantName == "" {
				ref := *f.Payment
				ref.MerchantName = names[ref.MerchantID]
				f.Payment = &ref
			}
		}
	}
	return nil
}

func (d *MerchantDirectory) names(ctx context.Context, tx pgx.Tx, ids []string) (map[string]string, error) {
	col, uuidIDs, err := d.column(ctx, tx)
	if err != nil || col == "" {
		return nil, err
	}
	var param any = ids
	if uuidIDs {
		// Compare as uuid, so that the primary key index serves the look-up.
		var us []uuid.UUID
		for _, id := range ids {
			if u, err := uuid.Parse(id); err == nil {
				us = append(us, u)
			}
		}
		param = us
	}
	rows, err := tx.Query(ctx, `SELECT `+col+`::text, name FROM merchant.merchants WHERE `+col+` = ANY($1)`, param)
	if err != nil {
		return nil, fmt.Errorf("reading merchant names: %w", err)
	}
	out := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return nil, err
		}
		out[id] = name
	}
	rows.Close()
	return out, rows.Err()
}

// column returns the id column of merchant.merchants and whether it is a uuid, or "" when
// there is no such table with a name column.
func (d *MerchantDirectory) column(ctx context.Context, tx pgx.Tx) (string, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checkedAt.IsZero() && time.Since(d.checkedAt) < directoryRecheck {
		return d.idColumn, d.uuidIDs, nil
	}
	rows, err := tx.Query(ctx, `SELECT column_name::text, data_type::text FROM information_schema.columns
        WHERE table_schema = 'merchant' AND table_name = 'merchants'`)
	if err != nil {
		return "", false, fmt.Errorf("looking for the merchant table: %w", err)
	}
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return "", false, err
		}
		types[name] = typ
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("looking for the merchant table: %w", err)
	}
	d.idColumn = ""
	if _, ok := types["name"]; ok {
		for _, c := range []string{"id", "merchant_id"} {
			if _, ok := types[c]; ok {
				d.idColumn = c
				break
			}
		}
	}
	d.uuidIDs = types[d.idColumn] == "uuid"
	d.checkedAt = time.Now()
	return d.idColumn, d.uuidIDs, nil
}
