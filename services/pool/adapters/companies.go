package adapters

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/payplat/platform/pkg/eventstore"
)

// ErrCompaniesNotVisible is returned while the gateway's table gateway.companies cannot be read:
// then no company can be told known, and facts wait on the stream (redelivered) rather than
// create pools nobody owns.
var ErrCompaniesNotVisible = errors.New("the companies table gateway.companies is not visible " +
	"(the gateway has not migrated this database yet, or this service's role may not read it); " +
	"facts are held until it is")

// CompanyDirectory tells which companies exist, so that a fact for an unknown company goes to
// the dead-letter stream instead of creating a pool nobody owns. Companies live in the
// gateway's table gateway.companies. When that table is not visible the directory fails closed:
// it answers ErrCompaniesNotVisible, and the consumer leaves the facts to be
// redelivered, instead of taking every company for known. It looks for the table again on each
// call until it is found, then remembers it.
type CompanyDirectory struct {
	mu     sync.Mutex
	exists bool
}

// NewCompanyDirectory returns a directory that discovers the companies table on first use.
func NewCompanyDirectory() *CompanyDirectory { return &CompanyDirectory{} }

// Unknown returns the ids among ids that are certainly not companies.
// It returns ErrCompaniesNotVisible while gateway.companies is not visible.
func (d *CompanyDirectory) Unknown(ctx context.Context, q eventstore.Querier, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ok, err := d.tableExists(ctx, q)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrCompaniesNotVisible
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
	if d.exists {
		return true, nil
	}
	// to_regclass is NULL for a table that does not exist; a schema or table this role may not
	// read is an error, here or in Unknown's query: the facts wait all the same.
	if err := q.QueryRow(ctx, `SELECT to_regclass('gateway.companies') IS NOT NULL`).Scan(&d.exists); err != nil {
		return false, fmt.Errorf("looking for the companies table: %w", err)
	}
	return d.exists, nil
}
