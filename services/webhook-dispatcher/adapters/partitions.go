package adapters

import (
	"context"
	"errors"
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

// ErrPartitionsChanged means WEBHOOK_PARTITIONS differs from the number of partitions while a
// dispatcher still holds a lease: a company's partition cannot change under running dispatchers.
var ErrPartitionsChanged = errors.New("WEBHOOK_PARTITIONS differs from the partitions the running dispatchers share: " +
	"stop every dispatcher, then start them all with the new value")

// Ensure makes the partitions 0..n-1, each with a position in every one of streams: start(s, p)
// for a partition or stream new to the table (0 when start is nil). When the table holds another number of
// partitions and no dispatcher holds a lease (all stopped), it replaces them with n, whose
// positions in each stream are the least of the old ones: every partition reads again from
// there, which creates nothing twice (deliveries are unique per endpoint and event). While a
// lease is live it returns ErrPartitionsChanged.
func (p *Partitions) Ensure(ctx context.Context, n int, streams []string, start func(stream string, p int) uint64) error {
	err := pgx.BeginFunc(ctx, p.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE partition_leases IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		var have, live int
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE owner IS NOT NULL AND lease_until >= now())
                FROM partition_leases`).Scan(&have, &live); err != nil {
			return err
		}
		from := start
		if have != 0 && have != n {
			if live > 0 {
				return ErrPartitionsChanged
			}
			least, err := leastPositions(ctx, tx)
			if err != nil {
				return err
			}
			from = func(stream string, _ int) uint64 { return least[stream] }
			if _, err := tx.Exec(ctx, `DELETE FROM partition_positions; DELETE FROM partition_leases`); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO partition_leases (partition) SELECT generate_series(0, $1 - 1)
                ON CONFLICT DO NOTHING`, n); err != nil {
			return err
		}
		var names []string
		var parts []int
		var seqs []int64
		for _, s := range streams {
			for part := range n {
				var seq uint64
				if from != nil {
					seq = from(s, part)
				}
				names, parts, seqs = append(names, s), append(parts, part), append(seqs, int64(seq))
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO partition_positions (stream, partition, seq)
                SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[])
                ON CONFLICT DO NOTHING`, names, parts, seqs)
		return err
	})
	if err != nil && !errors.Is(err, ErrPartitionsChanged) {
		return fmt.Errorf("creating partitions: %w", err)
	}
	return err
}

// leastPositions returns the least position of each stream.
func leastPositions(ctx context.Context, tx pgx.Tx) (map[string]uint64, error) {
	rows, err := tx.Query(ctx, `SELECT stream, min(seq) FROM partition_positions GROUP BY stream`)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	var stream string
	var seq int64
	_, err = pgx.ForEachRow(rows, []any{&stream, &seq}, func() error {
		out[stream] = uint64(seq)
		return nil
	})
	return out, err
}

// LiveMembers returns the dispatchers alive now (their heartbeats not yet expired).
func (p *Partitions) LiveMembers(ctx context.Context) ([]string, error) {
	rows, err := p.db.Query(ctx, `SELECT member FROM dispatcher_members WHERE seen_until >= now() ORDER BY member`)
	if err != nil {
		return nil, fmt.Errorf("reading the dispatchers alive: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Started tells whether the partitions have positions already (the dispatchers ran since they
// read the event streams themselves).
func (p *Partitions) Started(ctx context.Context) (bool, error) {
	var started bool
	if err := p.db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM partition_positions)`).Scan(&started); err != nil {
		return false, fmt.Errorf("reading partition positions: %w", err)
	}
	return started, nil
}

// Rewind moves back the positions in stream that its messages no longer back, and returns how
// many it moved. The stream is known by its creation time: one created again since the last
// call (by an operator) numbers new messages from 1, so every position goes back to 0; the same
// stream whose last sequence is below a position lost its last messages (with a server), so the
// sequences above last will be those of new messages, and the positions beyond go back to last.
func (p *Partitions) Rewind(ctx context.Context, stream string, created time.Time, last uint64) (int64, error) {
	var moved int64
	err := pgx.BeginFunc(ctx, p.db, func(tx pgx.Tx) error {
		var known time.Time
		err := tx.QueryRow(ctx, `SELECT created FROM intake_streams WHERE stream = $1 FOR UPDATE`, stream).Scan(&known)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			_, err = tx.Exec(ctx, `INSERT INTO intake_streams (stream, created) VALUES ($1, $2)`, stream, created)
		case err == nil && !known.Equal(created.Truncate(time.Microsecond)):
			if _, err := tx.Exec(ctx, `UPDATE intake_streams SET created = $2 WHERE stream = $1`, stream, created); err != nil {
				return err
			}
			last = 0
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE partition_positions SET seq = $2 WHERE stream = $1 AND seq > $2`, stream, int64(last))
		moved = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("rewinding positions in %s: %w", stream, err)
	}
	return moved, nil
}

// Positions returns the positions of partitions in stream.
func (p *Partitions) Positions(ctx context.Context, stream string, partitions []int) (map[int]uint64, error) {
	rows, err := p.db.Query(ctx, `SELECT partition, seq FROM partition_positions
        WHERE stream = $1 AND partition = ANY($2)`, stream, partitions)
	if err != nil {
		return nil, fmt.Errorf("reading positions in %s: %w", stream, err)
	}
	out := make(map[int]uint64, len(partitions))
	var part int
	var seq int64
	if _, err := pgx.ForEachRow(rows, []any{&part, &seq}, func() error {
		out[part] = uint64(seq)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("reading positions in %s: %w", stream, err)
	}
	if len(out) != len(partitions) {
		return nil, fmt.Errorf("reading positions in %s: %d of %d partitions have one", stream, len(out), len(partitions))
	}
	return out, nil
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
