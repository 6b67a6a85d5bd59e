package adapters

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/payplat/platform/pkg/eventstore"
)

// CompanyDirectory tells which companies exist, so that a fact for an unknown company goes to
// the dead-letter stream instead of creating a pool nobody owns. Companies live in the
// gateway's table gateway.companies; when that table is not in this database the directory
// cannot tell, and every company counts as known. Whether the table exists is looked up at
// most every directoryRecheck.
type CompanyDirectory struct {
	mu        sync.Mutex
	checkedAt time.Time
	exists    bool
}

// NewCompanyDirectory returns a directory that discovers the companies table on first use.
func NewCompanyDirectory() *CompanyDirectory { return &CompanyDirectory{} }

// Unknown returns the ids among ids that are certainly not companies.
func (d *CompanyDirectory) Unknown(ctx context.Context, q eventstore.Querier, ids []string) (map[string]bool, error) {
	ok, err := d.tableExists(ctx, q)
	if err != nil || !ok || len(ids) == 0 {
		return nil, err
	}
	rows, err := q.Query(ctx, `SELECT id::text FROM gateway.companies WHERE id::text = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("reading companies: %w", err)
	}
	known := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		known[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	unknown := map[string]bool{}
	for _, id := range ids {
		if !known[id] {
			unknown[id] = true
		}
	}
	return unknown, nil
}

func (d *CompanyDirectory) tableExists(ctx context.Context, q eventstore.Querier) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.exists || (!d.checkedAt.IsZero() && time.Since(d.checkedAt) < directoryRecheck) {
		return d.exists, nil
	}
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('gateway.companies') IS NOT NULL`).Scan(&exists); err != nil {
		return false, fmt.Errorf("looking for the companies table: %w", err)
	}
	d.exists, d.checkedAt = exists, time.Now()
	return exists, nil
}
