-- Which dispatcher consumes which partition of the WEBHOOK_EVENTS stream (app.Assigner): a
-- partition is leased to one live dispatcher at a time, the dispatchers alive share the
-- partitions evenly, and the lease of one that stops renewing (killed, frozen, cut off) expires.

-- +goose Up
CREATE TABLE partition_leases (
    partition   integer     PRIMARY KEY CHECK (partition >= 0),
    owner       text,
    lease_until timestamptz NOT NULL DEFAULT '-infinity'
);

CREATE TABLE dispatcher_members (
    member     text        PRIMARY KEY,
    seen_until timestamptz NOT NULL
);

-- +goose Down
DROP TABLE dispatcher_members;
DROP TABLE partition_leases;
