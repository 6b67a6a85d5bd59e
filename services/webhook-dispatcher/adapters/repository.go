package adapters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Repository keeps endpoints and the delivery log in schema "webhooks". Attempts are claimed with a
// lease (lease_until, lease_token) taken under FOR UPDATE SKIP LOCKED, so two dispatchers or two
// overlapping cron runs never attempt the same delivery at once, and a delivery whose
// dispatcher died mid-attempt is free again once its lease expires.
type Repository struct {
	db *pgxpool.Pool
}

// NewRepository returns a Repository on db (search_path webhooks).
func NewRepository(db *pgxpool.Pool) *Repository { return &Repository{db: db} }

const endpointCols = `id, company_id, environment, url, enabled, secret_sealed, secret_version, created_at, updated_at`

func scanEndpoint(row pgx.Row) (domain.Endpoint, error) {
	var e domain.Endpoint
	err := row.Scan(&e.ID, &e.CompanyID, &e.Environment, &e.URL, &e.Enabled, &e.SecretSealed,
		&e.SecretVersion, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

// UpdateEndpoint runs update on the endpoint of company and env inside a transaction that
// holds it locked (exists is false, and e carries only the company and environment, when there
// is none yet), then stores the result.
func (s *Repository) UpdateEndpoint(ctx context.Context, company, env string,
	update func(e *domain.Endpoint, exists bool) error) (domain.Endpoint, error) {
	var out domain.Endpoint
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		// Serialise the first configuration of a company too, when there is no row to lock.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('webhooks.endpoint:' || $1 || ':' || $2))`,
			company, env); err != nil {
			return err
		}
		e, err := scanEndpoint(tx.QueryRow(ctx, `SELECT `+endpointCols+` FROM endpoints
			WHERE company_id = $1 AND environment = $2`, company, env))
		exists := err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if !exists {
			e = domain.Endpoint{ID: uuid.New(), CompanyID: company, Environment: env}
		}
		if err := update(&e, exists); err != nil {
			return err
		}
		out, err = scanEndpoint(tx.QueryRow(ctx, `INSERT INTO endpoints
			(id, company_id, environment, url, enabled, secret_sealed, secret_version)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (company_id, environment) DO UPDATE SET url = EXCLUDED.url,
				enabled = EXCLUDED.enabled, secret_sealed = EXCLUDED.secret_sealed,
				secret_version = EXCLUDED.secret_version, updated_at = now()
			RETURNING `+endpointCols, e.ID, company, env, e.URL, e.Enabled, e.SecretSealed, e.SecretVersion))
		return err
	})
	if err != nil {
		return domain.Endpoint{}, fmt.Errorf("updating webhook endpoint: %w", err)
	}
	return out, nil
}

const deliveryCols = `d.id, d.endpoint_id, d.company_id, d.environment, d.event_id, d.event_type, d.payload,
	d.status, d.attempts, d.last_attempt_at, d.next_attempt_at, d.response_status, d.response_body,
	d.error_message, d.created_at`

const claimCols = deliveryCols + `, d.lease_token, e.url, e.enabled, e.secret_sealed`

func deliveryDest(d *domain.Delivery) []any {
	return []any{&d.ID, &d.EndpointID, &d.CompanyID, &d.Environment, &d.EventID, &d.EventType, &d.Payload,
		&d.Status, &d.Attempts, &d.LastAttemptAt, &d.NextAttemptAt, &d.ResponseStatus, &d.ResponseBody,
		&d.ErrorMessage, &d.CreatedAt}
}

// claimsOf reads the claims a claiming query answered (its rows and error), whose lease was
// asked for at claimedAt (this process's clock); the query's error or the scan's is wrapped
// with what the query was doing.
func claimsOf(rows pgx.Rows, err error, claimedAt time.Time, what string) ([]domain.Claim, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	claims, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Claim, error) {
		c := domain.Claim{ClaimedAt: claimedAt}
		err := row.Scan(append(deliveryDest(&c.Delivery), &c.Token, &c.URL, &c.Enabled, &c.SecretSealed)...)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return claims, nil
}

// CreateDeliveries creates, in one transaction with adv, one delivery per new event and
// deliverable endpoint of its company and environment, each already claimed for its first
// attempt (due now, leased for lease). An event that already has its delivery (a message read
// again after a crash, or the same event twice in news) creates nothing. It returns the claims
// of the deliveries it created, in the order of news. If a partition of adv is no longer leased
// to its member, it creates nothing and returns domain.ErrPartitionLost.
func (s *Repository) CreateDeliveries(ctx context.Context, news []domain.NewDelivery, lease time.Duration,
	adv domain.Advance) ([]domain.Claim, error) {
	if len(news) == 0 {
		return nil, advance(ctx, s.db, adv)
	}
	var claims []domain.Claim
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if err := advance(ctx, tx, adv); err != nil {
			return err
		}
		var err error
		claims, err = createDeliveries(ctx, tx, news, lease)
		return err
	})
	return claims, err
}

// advance moves the positions of adv, only if every one of its partitions is leased to its
// member now (else domain.ErrPartitionLost). The leases are locked (FOR SHARE) until the caller
// commits, so that no other dispatcher claims one of them before the deliveries of the batch
// are visible with its position (a claim skips the locked rows).
func advance(ctx context.Context, db querier, adv domain.Advance) error {
	tag, err := db.Exec(ctx, `UPDATE partition_positions p SET seq = GREATEST(p.seq, $3)
		WHERE p.stream = $1 AND p.partition IN (
			SELECT partition FROM partition_leases
			WHERE partition = ANY($2) AND owner = $4 AND lease_until > now() FOR SHARE)`,
		adv.Stream, adv.Partitions, int64(adv.Seq), adv.Member)
	if err != nil {
		return fmt.Errorf("advancing partitions %v of %s: %w", adv.Partitions, adv.Stream, err)
	}
	if tag.RowsAffected() != int64(len(adv.Partitions)) {
		return fmt.Errorf("advancing partitions %v of %s: %w", adv.Partitions, adv.Stream, domain.ErrPartitionLost)
	}
	return nil
}

// querier runs statements: the pool, or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// createDeliveries is the statement of CreateDeliveries.
func createDeliveries(ctx context.Context, db querier, news []domain.NewDelivery, lease time.Duration) ([]domain.Claim, error) {
	type key struct {
		event        uuid.UUID
		company, env string
	}
	seen := make(map[key]bool, len(news))
	var (
		companies, envs, types []string
		ids                    []uuid.UUID
		payloads               [][]byte
	)
	for _, n := range news {
		k := key{n.EventID, n.CompanyID, n.Environment}
		if seen[k] {
			continue
		}
		seen[k] = true
		companies = append(companies, n.CompanyID)
		envs = append(envs, n.Environment)
		ids = append(ids, n.EventID)
		types = append(types, n.EventType)
		payloads = append(payloads, n.Payload)
	}
	claimedAt := time.Now()
	rows, err := db.Query(ctx, `WITH input AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::bytea[])
				WITH ORDINALITY AS i(company_id, environment, event_id, event_type, payload, ord)),
		created AS (
			INSERT INTO deliveries (id, endpoint_id, company_id, environment, event_id, event_type, payload,
				next_attempt_at, lease_until, lease_token)
			SELECT gen_random_uuid(), e.id, e.company_id, e.environment, i.event_id, i.event_type, i.payload,
				now(), now() + $6 * interval '1 millisecond', $7
			FROM input i JOIN endpoints e ON e.company_id = i.company_id AND e.environment = i.environment
			WHERE e.enabled AND e.url <> ''
			ORDER BY i.ord
			ON CONFLICT (endpoint_id, event_id) DO NOTHING
			RETURNING *)
		SELECT `+claimCols+` FROM created d JOIN endpoints e ON e.id = d.endpoint_id
			JOIN input i ON i.event_id = d.event_id AND i.company_id = d.company_id AND i.environment = d.environment
		ORDER BY i.ord, d.id`,
		companies, envs, ids, types, payloads, lease.Milliseconds(), uuid.New())
	return claimsOf(rows, err, claimedAt, "creating deliveries")
}

// Deliverable returns which of targets have an enabled endpoint with a URL now: the ones
// CreateDeliveries would create deliveries for. It reads the table every time (no cache), so a
// configuration committed before the call is seen.
func (s *Repository) Deliverable(ctx context.Context, targets []domain.Target) (map[domain.Target]bool, error) {
	companies := make([]string, len(targets))
	envs := make([]string, len(targets))
	for i, t := range targets {
		companies[i], envs[i] = t.CompanyID, t.Environment
	}
	rows, err := s.db.Query(ctx, `SELECT e.company_id, e.environment
		FROM endpoints e JOIN unnest($1::text[], $2::text[]) AS t(company_id, environment)
			ON e.company_id = t.company_id AND e.environment = t.environment
		WHERE e.enabled AND e.url <> ''`, companies, envs)
	if err != nil {
		return nil, fmt.Errorf("looking up endpoints: %w", err)
	}
	out := make(map[domain.Target]bool)
	var t domain.Target
	_, err = pgx.ForEachRow(rows, []any{&t.CompanyID, &t.Environment}, func() error {
		out[t] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("looking up endpoints: %w", err)
	}
	return out, nil
}

// claimHeadroom is how many candidates a claim considers per delivery it may take (per
// endpoint and in all): the rows that concurrent claims (overlapping cron runs, other
// replicas' recovery passes) are locking at that moment are skipped, and the candidates
// behind them must be enough for up to claimHeadroom claims at once to each fill its batch.
const claimHeadroom = 4

// ClaimDue leases up to limit deliveries whose automatic attempt is due, taken fairly across
// endpoints (claimWhere), skipping those another attempt holds (a live lease, or rows another
// transaction is claiming right now). Deliveries whose lease expired (their dispatcher died)
// are due again.
func (s *Repository) ClaimDue(ctx context.Context, limit int, lease time.Duration) ([]domain.Claim, error) {
	return s.claimWhere(ctx, "true", limit, lease)
}

// claimWhere leases up to limit due, unleased deliveries that also match cond (constant SQL on
// deliveries d), round-robin across endpoints: first the oldest due delivery of each endpoint
// (the endpoint whose oldest is oldest first), then the second of each, and so on. A dead
// endpoint with thousands of due retries thus takes one turn per round like any other, instead
// of every batch until its backlog is gone, so it never delays another company's retries; an
// endpoint alone with due deliveries still gets the whole batch. Each endpoint's candidates are
// read from its own index range, a few batches of them at most, so a backlog is never scanned
// whole.
func (s *Repository) claimWhere(ctx context.Context, cond string, limit int, lease time.Duration) ([]domain.Claim, error) {
	claimedAt := time.Now()
	const due = `d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())`
	rows, err := s.db.Query(ctx, `WITH candidates AS (
			SELECT c.* FROM endpoints e CROSS JOIN LATERAL (
				SELECT d.id, d.endpoint_id, d.next_attempt_at FROM deliveries d
				WHERE d.endpoint_id = e.id AND `+due+` AND `+cond+`
				ORDER BY d.next_attempt_at, d.id
				LIMIT $4) c),
		turns AS (
			-- The bound lets the planner fetch each row by its key instead of scanning every
			-- due one.
			SELECT id, next_attempt_at,
				row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS turn
			FROM candidates
			ORDER BY turn, next_attempt_at, id
			LIMIT $4),
		picked AS (
			-- The conditions again on the locked row: another claim may have taken it meanwhile.
			SELECT d.id FROM turns t JOIN deliveries d ON d.id = t.id
			WHERE `+due+` AND `+cond+`
			ORDER BY t.turn, t.next_attempt_at, t.id
			LIMIT $1
			FOR UPDATE OF d SKIP LOCKED),
		claimed AS (
			UPDATE deliveries d SET lease_until = now() + $2 * interval '1 millisecond', lease_token = $3
			FROM picked WHERE d.id = picked.id
			RETURNING d.*)
		SELECT `+claimCols+` FROM claimed d JOIN endpoints e ON e.id = d.endpoint_id
		ORDER BY d.next_attempt_at, d.id`, limit, lease.Milliseconds(), uuid.New(), limit*claimHeadroom)
	return claimsOf(rows, err, claimedAt, "claiming due deliveries")
}

// ClaimStranded leases up to limit deliveries whose first attempt never happened and nobody
// holds: their dispatcher died after creating them, or its queue for the endpoint was full.
// They are taken fairly across endpoints, like ClaimDue's.
func (s *Repository) ClaimStranded(ctx context.Context, limit int, lease time.Duration) ([]domain.Claim, error) {
	return s.claimWhere(ctx, `d.status = 'PENDING' AND d.attempts = 0`, limit, lease)
}

// ClaimOne leases delivery id of company and env whatever its schedule (a manual retry). It
// fails with domain.ErrNotFound when there is no such delivery for them, and domain.ErrInFlight
// when an attempt holds it.
func (s *Repository) ClaimOne(ctx context.Context, id uuid.UUID, company, env string, lease time.Duration) (domain.Claim, error) {
	claimedAt := time.Now()
	rows, err := s.db.Query(ctx, `WITH target AS (
			SELECT id, lease_until FROM deliveries
			WHERE id = $1 AND company_id = $2 AND environment = $3
			FOR UPDATE),
		claimed AS (
			UPDATE deliveries d SET lease_until = now() + $4 * interval '1 millisecond', lease_token = $5
			FROM target WHERE d.id = target.id AND (target.lease_until IS NULL OR target.lease_until < now())
			RETURNING d.*)
		SELECT `+claimCols+` FROM claimed d JOIN endpoints e ON e.id = d.endpoint_id`,
		id, company, env, lease.Milliseconds(), uuid.New())
	claims, err := claimsOf(rows, err, claimedAt, "claiming delivery "+id.String())
	if err != nil {
		return domain.Claim{}, err
	}
	if len(claims) == 1 {
		return claims[0], nil
	}
	var exists bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries
		WHERE id = $1 AND company_id = $2 AND environment = $3)`, id, company, env).Scan(&exists); err != nil {
		return domain.Claim{}, fmt.Errorf("claiming delivery %s: %w", id, err)
	}
	if exists {
		return domain.Claim{}, domain.ErrInFlight
	}
	return domain.Claim{}, domain.ErrNotFound
}

// Renew extends the lease of c before its attempt starts; false means the lease was lost
// (it expired and another attempt took the delivery), and the attempt must not run.
func (s *Repository) Renew(ctx context.Context, c domain.Claim, lease time.Duration) (bool, error) {
	tag, err := s.db.Exec(ctx, `UPDATE deliveries SET lease_until = now() + $3 * interval '1 millisecond'
		WHERE id = $1 AND lease_token = $2 AND lease_until > now()`, c.ID, c.Token, lease.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("renewing the lease of delivery %s: %w", c.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release gives up the lease of c without an attempt; the delivery stays due.
func (s *Repository) Release(ctx context.Context, c domain.Claim) error {
	if _, err := s.db.Exec(ctx, `UPDATE deliveries SET lease_until = NULL, lease_token = NULL
		WHERE id = $1 AND lease_token = $2`, c.ID, c.Token); err != nil {
		return fmt.Errorf("releasing delivery %s: %w", c.ID, err)
	}
	return nil
}

// Record stores the result of the attempt c held the lease for, and frees the delivery. It
// returns the updated delivery, or domain.ErrInFlight when the lease was lost meanwhile (the
// attempt happened, but another one owns the delivery now).
func (s *Repository) Record(ctx context.Context, c domain.Claim, a domain.Attempted) (domain.Delivery, error) {
	var code *int
	if a.Outcome.StatusCode != 0 {
		code = &a.Outcome.StatusCode
	}
	var body, msg *string
	if a.Outcome.StatusCode != 0 {
		body = &a.Outcome.Body
	}
	if a.Outcome.Error != "" {
		msg = &a.Outcome.Error
	}
	var d domain.Delivery
	err := s.db.QueryRow(ctx, `UPDATE deliveries d SET status = $3, attempts = attempts + 1,
			last_attempt_at = $4, next_attempt_at = $5, response_status = $6, response_body = $7,
			error_message = $8, lease_until = NULL, lease_token = NULL
		WHERE id = $1 AND lease_token = $2
		RETURNING `+deliveryCols, c.ID, c.Token, a.Status, a.At, a.Next, code, body, msg).
		Scan(deliveryDest(&d)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Delivery{}, domain.ErrInFlight
	}
	if err != nil {
		return domain.Delivery{}, fmt.Errorf("recording attempt of delivery %s: %w", c.ID, err)
	}
	return d, nil
}

// RecordAll stores the results of many attempts in one statement (one round trip, one
// commit), each only under its own claim's lease, and frees those deliveries. It returns, by
// delivery id, the number of attempts of each delivery it recorded; a delivery missing from
// it lost its lease meanwhile (the attempt happened, but another one owns the delivery now).
func (s *Repository) RecordAll(ctx context.Context, recs []domain.Recording) (map[uuid.UUID]int, error) {
	// Rows are updated in id order, so two batches never wait for each other in a cycle.
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b domain.Recording) int { return bytes.Compare(a.Claim.ID[:], b.Claim.ID[:]) })
	n := len(recs)
	var (
		ids, tokens  = make([]uuid.UUID, n), make([]uuid.UUID, n)
		statuses     = make([]string, n)
		ats          = make([]time.Time, n)
		nexts        = make([]*time.Time, n)
		codes        = make([]*int32, n)
		bodies, msgs = make([]*string, n), make([]*string, n)
	)
	for i, r := range recs {
		ids[i], tokens[i] = r.Claim.ID, r.Claim.Token
		a := r.Attempted
		statuses[i], ats[i], nexts[i] = a.Status, a.At, a.Next
		if a.Outcome.StatusCode != 0 {
			code := int32(a.Outcome.StatusCode)
			body := a.Outcome.Body
			codes[i], bodies[i] = &code, &body
		}
		if a.Outcome.Error != "" {
			msg := a.Outcome.Error
			msgs[i] = &msg
		}
	}
	rows, err := s.db.Query(ctx, `UPDATE deliveries d SET status = u.status, attempts = d.attempts + 1,
			last_attempt_at = u.at, next_attempt_at = u.next, response_status = u.code, response_body = u.body,
			error_message = u.msg, lease_until = NULL, lease_token = NULL
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[],
			$7::text[], $8::text[]) AS u(id, token, status, at, next, code, body, msg)
		WHERE d.id = u.id AND d.lease_token = u.token
		RETURNING d.id, d.attempts`, ids, tokens, statuses, ats, nexts, codes, bodies, msgs)
	if err != nil {
		return nil, fmt.Errorf("recording %d attempts: %w", n, err)
	}
	recorded := make(map[uuid.UUID]int, n)
	var (
		id       uuid.UUID
		attempts int
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &attempts}, func() error {
		recorded[id] = attempts
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recording %d attempts: %w", n, err)
	}
	return recorded, nil
}

// PruneDelivered deletes up to limit deliveries delivered (SUCCESS) more than olderThan ago,
// oldest first, and returns how many. A delivery leased by a manual retry in flight is kept,
// and rows another statement holds are skipped, so replicas pruning at once never wait for
// each other.
func (s *Repository) PruneDelivered(ctx context.Context, olderThan time.Duration, limit int) (int, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM deliveries WHERE id IN (
			SELECT id FROM deliveries
			WHERE status = 'SUCCESS' AND last_attempt_at < now() - $1 * interval '1 millisecond'
				AND (lease_until IS NULL OR lease_until < now())
			ORDER BY last_attempt_at
			LIMIT $2
			FOR UPDATE SKIP LOCKED)`, olderThan.Milliseconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("pruning delivered deliveries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
