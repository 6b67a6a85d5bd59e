-- Read tables of the merchant aggregate, updated in the same transaction as each append to the
-- event store (read-your-writes), and the wallet records of the HD wallet provider.
-- Versions 1-99 belong to pkg/eventstore and 101+ to pkg/projection; the merchant service's own
-- migrations start at 1001.

-- +goose Up
-- One row per merchant: its state at stream version `version` (a snapshot of the aggregate).
CREATE TABLE merchants (
    id             uuid        PRIMARY KEY,
    company_id     text        NOT NULL,
    environment    text        NOT NULL CHECK (environment IN ('test', 'live')),
    name           text        NOT NULL,
    email          text        NOT NULL,
    wallet_address text        NOT NULL,
    wallet_user_id text        NOT NULL,
    status         text        NOT NULL,
    balance_micros bigint      NOT NULL DEFAULT 0,
    version        bigint      NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE INDEX merchants_company_env_created_idx ON merchants (company_id, environment, created_at DESC, id DESC);

-- The uniqueness reservation of an email (lower-cased) per company and environment, taken in
-- the transaction that appends merchant.created: of two concurrent creations one waits on the
-- primary key and then finds it taken.
CREATE TABLE merchant_emails (
    company_id  text NOT NULL,
    environment text NOT NULL,
    email_key   text NOT NULL,
    merchant_id uuid NOT NULL,
    PRIMARY KEY (company_id, environment, email_key)
);

-- The merchant ledger. seq is the stream version of the entry's event; source_key (the payment
-- id or the transaction hash behind the entry) makes each fact one entry.
CREATE TABLE merchant_ledger (
    id                    uuid        PRIMARY KEY,
    merchant_id           uuid        NOT NULL REFERENCES merchants (id),
    seq                   bigint      NOT NULL,
    type                  text        NOT NULL,
    amount_micros         bigint      NOT NULL,
    balance_before_micros bigint      NOT NULL,
    balance_after_micros  bigint      NOT NULL,
    payment_id            text        NOT NULL DEFAULT '',
    tx_hash               text        NOT NULL DEFAULT '',
    status                text        NOT NULL,
    description           text        NOT NULL DEFAULT '',
    source_key            text        NOT NULL,
    created_at            timestamptz NOT NULL,
    CONSTRAINT merchant_ledger_source_key UNIQUE (merchant_id, source_key),
    CONSTRAINT merchant_ledger_seq_key UNIQUE (merchant_id, seq)
);

-- The HD wallet provider's user records: which derivation index each wallet has. No private
-- key is stored; the key of index i is m/44'/60'/0'/0/i of the master seed in configuration.
CREATE SEQUENCE wallet_derivation_index AS bigint MINVALUE 0 START 0;
CREATE TABLE wallet_users (
    id               uuid        PRIMARY KEY,
    derivation_index bigint      NOT NULL UNIQUE,
    address          text        NOT NULL UNIQUE,
    company_id       text        NOT NULL,
    environment      text        NOT NULL,
    merchant_id      uuid        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE wallet_users;
DROP SEQUENCE wallet_derivation_index;
DROP TABLE merchant_ledger;
DROP TABLE merchant_emails;
DROP TABLE merchants;
