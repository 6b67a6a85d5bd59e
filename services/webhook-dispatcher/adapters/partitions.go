package adapters

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Partitions keeps the leases of the dispatchers on the partitions of their events stream, on
// PostgreSQL's clock (the dispatchers' clocks are never compared).
type Partitions struct {
	db *pgxpool.Pool
}

// NewPartitions returns the lease store on db.
func NewPartitions(db *pgxpool.Pool) *Partitions { return &Partitions{db: db} }

// Ensure creates the rows of partitions 0..n-1.
func (p *Partitions) Ensure(ctx context.Context, n int) error {
	_, err := p.db.Exec(ctx, `INSERT INTO partition_leases (partition) SELECT generate_series(0, $1 - 1)
        ON CONFLICT DO NOTHING`, n)
	if err != nil {
		return fmt.Errorf("creating partition leases: %w", err)
	}
	return nil
}

// Heartbeat marks member alive for ttl, forgets members that stopped beating, and returns how
// many are alive.
func (p *Partitions) Heartbeat(ctx context.Context, member string, ttl time.Duration) (int, error) {
	var live int
	err := pgx.BeginFunc(ctx, p.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO dispatcher_members (member, seen_until)
                VALUES ($1, now() + make_interval(secs => $2))
                ON CONFLICT (member) DO UPDATE SET seen_until = EXCLUDED.seen_until`, member, ttl.Seconds()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM dispatcher_members WHERE seen_until < now()`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM dispatcher_members`).Scan(&live)
	})
	if err != nil {
		return 0, fmt.Errorf("heartbeat: %w", err)
	}
	return live, nil
}

// Renew extends the leases member holds by ttl and returns their partitions.
func (p *Partitions) Renew(ctx context.Context, member string, ttl time.Duration) ([]int, error) {
	rows, err := p.db.Query(ctx, `UPDATE partition_leases SET lease_until = now() + make_interval(secs => $2)
        WHERE owner = $1 AND lease_until >= now() RETURNING partition`, member, ttl.Seconds())
	if err != nil {
		return nil, fmt.Errorf("renewing partition leases: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

// Claim leases up to n partitions that nobody holds (never leased, released, or expired) to
// member for ttl, lowest first, and returns them.
func (p *Partitions) Claim(ctx context.Context, member string, n int, ttl time.Duration) ([]int, error) {
	rows, err := p.db.Query(ctx, `UPDATE partition_leases l SET owner = $1, lease_until = now() + make_interval(secs => $3)
        FROM (SELECT partition FROM partition_leases WHERE owner IS NULL OR lease_until < now()
              ORDER BY partition LIMIT $2 FOR UPDATE SKIP LOCKED) free
        WHERE l.partition = free.partition RETURNING l.partition`, member, n, ttl.Seconds())
	if err != nil {
		return nil, fmt.Errorf("claiming partitions: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

// Release gives partition back, if member holds it.
func (p *Partitions) Release(ctx context.Context, member string, partition int) error {
	_, err := p.db.Exec(ctx, `UPDATE partition_leases SET owner = NULL, lease_until = '-infinity'
        WHERE partition = $2 AND owner = $1`, member, partition)
	if err != nil {
		return fmt.Errorf("releasing partition %d: %w", partition, err)
	}
	return nil
}

// Leave forgets member: it holds no partition and counts no more among the live.
func (p *Partitions) Leave(ctx context.Context, member string) error {
	_, err := p.db.Exec(ctx, `WITH gone AS (DELETE FROM dispatcher_members WHERE member = $1)
        UPDATE partition_leases SET owner = NULL, lease_until = '-infinity' WHERE owner = $1`, member)
	if err != nil {
		return fmt.Errorf("leaving: %w", err)
	}
	return nil
}
