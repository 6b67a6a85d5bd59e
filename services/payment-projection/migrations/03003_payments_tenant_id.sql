-- The indexes of payments are led by a fixed-width key of the tenant (a company in one
-- environment), tenant_id, instead of the text columns company_id and environment: a rebuild
-- builds every index of payments after the load, and sorting on text compares with strcoll (the
-- database collation is C.UTF-8) and cannot cache the offsets of the columns after it, which
-- made those builds 2-3 times slower than on a fixed-width key. Nothing else changes: every
-- query still filters on company_id and environment as well, and the primary key accepts and
-- refuses exactly the rows it did before.
--
-- tenant_id is hashtextextended(company_id || '/' || environment, 0), the expression of the
-- pool's pool_id (migration 02003 of the pool service; environment, 'test' or 'live', has no
-- '/', so the string names one tenant), a 64-bit hash used as an index key, not for security.
-- It is a generated column: a rebuild and `projections verify` give the same value (no
-- sequence), writers never name it (it is in no COPY or INSERT column list), and readers
-- compute it from the company id and environment with the same expression. Its values are part
-- of PostgreSQL's on-disk format (hash indexes and hash partitions store them, so they do not
-- change across versions), and a dump does not hold them: a restore computes them again.
--
-- Two tenants may share a tenant_id (a hash collision: about 3 in 10^10 for 100,000 tenants).
-- Nothing then goes wrong: every query also filters on company_id and environment, so no
-- company ever sees another's payments, and the primary key ends with company_id and
-- environment, so it stays exactly (company_id, environment, payment_id). Those trailing
-- columns are compared only between rows of equal tenant_id and payment_id: they cost the sort
-- nothing but their width. It stays a primary key, not a unique constraint: the table keeps a
-- declared row identity (the replica identity of logical replication), and the projector's
-- ON CONFLICT and a rebuild (which builds the index on the shadow table and attaches it with
-- ADD PRIMARY KEY USING INDEX, instant since the shadow copies tenant_id's NOT NULL) treat
-- either the same.
--
-- tenant_id follows from (company_id, environment), which the planner cannot know by itself:
-- it would multiply the selectivities of tenant_id = and company_id = as if they were
-- independent, estimate a tenant's payments as many times too few as there are companies, and
-- pick a bitmap scan and a sort of the whole tenant over walking the index for a page. The
-- statistics of the functional dependencies tell it (ANALYZE fills them: here, and autovacuum
-- after a rebuild, which carries the statistics object over).
--
-- The list filtered by public status is served by one partial index per status: (tenant_id,
-- created_at DESC, payment_id DESC) holds no text in front of the payment id, each build sorts
-- only its status's rows, and the three share the index builders (0.6 s together against 0.7 s
-- for one (tenant_id, public_status, created_at DESC, payment_id DESC) on 345,000 payments);
-- readers name the status as a literal so that the planner can pick its index. The payment id
-- is compared bytewise (COLLATE "C"): equality is unchanged (the database collation is
-- deterministic), the order is too (C.UTF-8 orders by code point, which is the order of the
-- UTF-8 bytes; payment ids are any tokens, not only ASCII), and the primary key's sort, where
-- every comparison of two rows of a tenant falls through to the payment id, no longer calls
-- strcoll (0.5 s against 0.6-0.7 s).

-- +goose Up
ALTER TABLE payments DROP CONSTRAINT payments_pkey;
DROP INDEX payments_list_idx, payments_list_status_idx;
ALTER TABLE payments
    ADD COLUMN tenant_id bigint NOT NULL GENERATED ALWAYS AS (hashtextextended(company_id || '/' || environment, 0)) STORED,
    ALTER COLUMN payment_id TYPE text COLLATE "C",
    ADD CONSTRAINT payments_pkey PRIMARY KEY (tenant_id, payment_id, company_id, environment);
CREATE INDEX payments_list_idx ON payments (tenant_id, created_at DESC, payment_id DESC);
CREATE INDEX payments_list_pending_idx ON payments (tenant_id, created_at DESC, payment_id DESC)
    WHERE public_status = 'PENDING';
CREATE INDEX payments_list_confirmed_idx ON payments (tenant_id, created_at DESC, payment_id DESC)
    WHERE public_status = 'CONFIRMED';
CREATE INDEX payments_list_failed_idx ON payments (tenant_id, created_at DESC, payment_id DESC)
    WHERE public_status = 'FAILED';
CREATE STATISTICS payments_tenant_stats (dependencies) ON tenant_id, company_id, environment FROM payments;
ANALYZE payments;

-- +goose Down
DROP STATISTICS payments_tenant_stats;
DROP INDEX payments_list_idx, payments_list_pending_idx, payments_list_confirmed_idx, payments_list_failed_idx;
ALTER TABLE payments DROP CONSTRAINT payments_pkey;
ALTER TABLE payments DROP COLUMN tenant_id, ALTER COLUMN payment_id TYPE text COLLATE "default",
    ADD CONSTRAINT payments_pkey PRIMARY KEY (company_id, environment, payment_id);
CREATE INDEX payments_list_idx ON payments (company_id, environment, created_at DESC, payment_id DESC);
CREATE INDEX payments_list_status_idx
    ON payments (company_id, environment, public_status, created_at DESC, payment_id DESC);
