-- The indexes of movements are led by a fixed-width key of the pool, pool_id, instead of the
-- text columns company_id and environment: a rebuild builds every index of its movements after
-- the load, and sorting on text compares with strcoll (the database collation is C.UTF-8) and
-- cannot cache the offsets of the columns after it, which made those builds 2-4 times slower
-- than on a fixed-width key. Nothing else changes: every query still filters on company_id and
-- environment as well, and the constraints accept and refuse exactly the rows they did before.
--
-- pool_id is hashtextextended(company_id || '/' || environment, 0), a 64-bit hash of the pool
-- (environment, 'test' or 'live', has no '/', so the string names one pool) used as an index
-- key, not for security. It is a generated column: a rebuild and `projections verify` give the
-- same value (no sequence), writers never name it (it is in no COPY column list), and readers
-- compute it from the company id and environment with the same expression. Its values are part
-- of PostgreSQL's on-disk format (hash indexes and hash partitions store them, so they do not
-- change across versions), and a dump does not hold them: a restore computes them again. Not
-- md5, which goes through OpenSSL here: about 2.4 µs a row, 2.4 s more to load a million
-- movements, as much as the faster index builds save.
--
-- Two pools may share a pool_id (a hash collision: about 3 in 10^10 for 100,000 pools). Nothing
-- then goes wrong: every query also filters on company_id and environment, so no company ever
-- sees another's rows, and the unique constraints end with company_id and environment, so they
-- stay exactly (company_id, environment, seq) and (company_id, environment, key). Those trailing
-- columns are compared only between rows of equal pool_id and seq (or key): they cost the sorts
-- nothing but their width.
--
-- pool_id follows from (company_id, environment), which the planner cannot know by itself:
-- it would multiply the selectivities of pool_id = and company_id = as if they were
-- independent, estimate a pool's rows as many times too few as there are companies, and pick
-- a bitmap scan and a sort of the whole pool over walking the index for a page. The statistics
-- of the functional dependencies tell it (ANALYZE fills them: here, and autovacuum after a
-- rebuild, which carries the statistics object over).
--
-- The list filtered by type is served by one partial index per type: (pool_id, seq DESC) holds
-- no text, each build sorts only its type's rows, and the four share the index builders; readers
-- name the type as a literal so that the planner can pick its index. The idempotency key is
-- compared bytewise (COLLATE "C"): keys are ASCII, equality is unchanged (the database collation
-- is deterministic), and its sort no longer calls strcoll.

-- +goose Up
ALTER TABLE movements DROP CONSTRAINT movements_pool_seq_key, DROP CONSTRAINT movements_pool_key_key;
DROP INDEX movements_pool_type_seq_idx;
ALTER TABLE movements
    ADD COLUMN pool_id bigint GENERATED ALWAYS AS (hashtextextended(company_id || '/' || environment, 0)) STORED,
    ALTER COLUMN key TYPE text COLLATE "C";
ALTER TABLE movements
    ADD CONSTRAINT movements_pool_seq_key UNIQUE (pool_id, seq, company_id, environment),
    ADD CONSTRAINT movements_pool_key_key UNIQUE (pool_id, key, company_id, environment);
CREATE INDEX movements_pool_deposit_seq_idx ON movements (pool_id, seq DESC) WHERE type = 'DEPOSIT';
CREATE INDEX movements_pool_debit_seq_idx ON movements (pool_id, seq DESC) WHERE type = 'DEBIT';
CREATE INDEX movements_pool_credit_seq_idx ON movements (pool_id, seq DESC) WHERE type = 'CREDIT';
CREATE INDEX movements_pool_withdrawal_seq_idx ON movements (pool_id, seq DESC) WHERE type = 'WITHDRAWAL';
CREATE STATISTICS movements_pool_stats (dependencies) ON pool_id, company_id, environment FROM movements;
ANALYZE movements;

-- +goose Down
DROP STATISTICS movements_pool_stats;
DROP INDEX movements_pool_deposit_seq_idx, movements_pool_debit_seq_idx, movements_pool_credit_seq_idx,
    movements_pool_withdrawal_seq_idx;
ALTER TABLE movements DROP CONSTRAINT movements_pool_seq_key, DROP CONSTRAINT movements_pool_key_key;
ALTER TABLE movements DROP COLUMN pool_id, ALTER COLUMN key TYPE text COLLATE "default";
ALTER TABLE movements
    ADD CONSTRAINT movements_pool_seq_key UNIQUE (company_id, environment, seq),
    ADD CONSTRAINT movements_pool_key_key UNIQUE (company_id, environment, key);
CREATE INDEX movements_pool_type_seq_idx ON movements (company_id, environment, type, seq DESC);
