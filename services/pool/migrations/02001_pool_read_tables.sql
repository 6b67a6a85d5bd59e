-- Read tables of the pool aggregate, written in the same transaction as each append to the
-- event store (read your writes). Amounts are micro-USDC (bigint). The gateway reads
-- balances and movements directly, read-only.

-- +goose Up
-- One row per pool (company, environment) that has at least one event: the snapshot of the
-- aggregate at stream version `version`, its settings, and the number of movements per type
-- (so that the total of a filtered list is one row read, whatever the size of the pool). A pool
-- without a row has balance 0.00 and the default settings.
CREATE TABLE balances (
    company_id           text        NOT NULL,
    environment          text        NOT NULL CHECK (environment IN ('test', 'live')),
    balance              bigint      NOT NULL DEFAULT 0,
    low_threshold        bigint      NOT NULL CHECK (low_threshold >= 0),
    auto_top_up_enabled  boolean     NOT NULL DEFAULT false,
    version              bigint      NOT NULL DEFAULT 0,
    movement_count       bigint      NOT NULL DEFAULT 0,
    deposit_count        bigint      NOT NULL DEFAULT 0,
    debit_count          bigint      NOT NULL DEFAULT 0,
    credit_count         bigint      NOT NULL DEFAULT 0,
    withdrawal_count     bigint      NOT NULL DEFAULT 0,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (company_id, environment)
);

-- Pool transactions (SPEC §2.6). seq numbers the movements of a pool from 1, in the order of
-- the balance chain: newest first is seq descending.
CREATE TABLE movements (
    id              uuid        PRIMARY KEY,
    company_id      text        NOT NULL,
    environment     text        NOT NULL,
    seq             bigint      NOT NULL,
    type            text        NOT NULL CHECK (type IN ('DEPOSIT', 'DEBIT', 'CREDIT', 'WITHDRAWAL')),
    amount          bigint      NOT NULL,
    balance_before  bigint      NOT NULL,
    balance_after   bigint      NOT NULL CHECK (balance_after = balance_before + amount),
    status          text        NOT NULL CHECK (status IN ('PENDING', 'CONFIRMED')),
    tx_hash         text        NOT NULL DEFAULT '',
    description     text        NOT NULL DEFAULT '',
    payment_id      text,
    payment_amount  bigint,
    merchant_id     text,
    merchant_name   text,
    withdrawal_id   text,
    to_address      text,
    created_at      timestamptz NOT NULL,
    confirmed_at    timestamptz,
    CONSTRAINT movements_pool_seq_key UNIQUE (company_id, environment, seq)
);

CREATE INDEX movements_pool_type_seq_idx ON movements (company_id, environment, type, seq DESC);

-- Idempotency keys of the facts already recorded (deposit:<tx hash>, withdrawal:<id>,
-- debit:<payment id>, credit:<payment id>), inserted in the append transaction: one movement
-- per key whatever the redeliveries and crashes.
CREATE TABLE movement_keys (
    company_id   text NOT NULL,
    environment  text NOT NULL,
    key          text NOT NULL,
    movement_id  uuid NOT NULL,
    PRIMARY KEY (company_id, environment, key)
);

-- +goose Down
DROP TABLE movement_keys;
DROP TABLE movements;
DROP TABLE balances;
