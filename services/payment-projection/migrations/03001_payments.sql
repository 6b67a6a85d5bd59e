-- The payments read table and the facts it is folded from. Versions 1-99 belong to
-- pkg/eventstore and 101+ to pkg/projection; the payment-projection service's own migrations
-- start at 3001.

-- +goose Up
-- Every applied payment event, one row each. A payment's row in `payments` is recomputed from
-- all its facts (sorted by status rank, then event id) whenever one arrives, so the result does
-- not depend on the order or the repetition in which the bus delivers them.
CREATE TABLE payment_facts (
    company_id         text        NOT NULL,
    environment        text        NOT NULL,
    payment_id         text        NOT NULL,
    event_id           uuid        NOT NULL,
    rank               smallint    NOT NULL,
    status             text        NOT NULL,
    merchant_id        text        NOT NULL DEFAULT '',
    merchant_wallet    text        NOT NULL DEFAULT '',
    customer_wallet    text        NOT NULL DEFAULT '',
    amount_micros      bigint      NOT NULL DEFAULT 0,
    tx_hash            text        NOT NULL DEFAULT '',
    block_explorer_url text        NOT NULL DEFAULT '',
    error_message      text        NOT NULL DEFAULT '',
    created_at         timestamptz,
    expires_at         timestamptz,
    confirmed_at       timestamptz,
    expired_at         timestamptz,
    occurred_at        timestamptz NOT NULL,
    PRIMARY KEY (company_id, environment, payment_id, event_id)
);

-- One row per payment (company, environment, payment id): the fold of its facts.
-- status is the precise status (CREATED, PROCESSING, CONFIRMED, FAILED, EXPIRED);
-- public_status is what the API shows (DESIGN §4). has_created says whether payment.created
-- has arrived; until then created_at is the earliest event time. updated_at is the latest time
-- the payment's events carry. expiry_published_at (a flag: the deadline it was set for, not a
-- wall-clock time, so that a rebuild gives the same row) is set by the expirer in the
-- transaction that claims the payment and published payment.expired, and by the projection when
-- it applies payment.expired.
CREATE TABLE payments (
    company_id          text        NOT NULL,
    environment         text        NOT NULL,
    payment_id          text        NOT NULL,
    status              text        NOT NULL DEFAULT 'CREATED',
    public_status       text        GENERATED ALWAYS AS (CASE status
                            WHEN 'CONFIRMED' THEN 'CONFIRMED'
                            WHEN 'FAILED' THEN 'FAILED'
                            WHEN 'EXPIRED' THEN 'FAILED'
                            ELSE 'PENDING' END) STORED,
    has_created         boolean     NOT NULL DEFAULT false,
    merchant_id         text        NOT NULL DEFAULT '',
    merchant_wallet     text        NOT NULL DEFAULT '',
    customer_wallet     text        NOT NULL DEFAULT '',
    amount_micros       bigint      NOT NULL DEFAULT 0,
    currency            text        NOT NULL DEFAULT 'USDC',
    tx_hash             text        NOT NULL DEFAULT '',
    block_explorer_url  text        NOT NULL DEFAULT '',
    error_message       text        NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz,
    confirmed_at        timestamptz,
    expired_at          timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    expiry_published_at timestamptz,
    PRIMARY KEY (company_id, environment, payment_id)
);
CREATE INDEX payments_list_idx ON payments (company_id, environment, created_at DESC, payment_id DESC);
CREATE INDEX payments_list_status_idx
    ON payments (company_id, environment, public_status, created_at DESC, payment_id DESC);
CREATE INDEX payments_expiry_idx ON payments (expires_at)
    WHERE status = 'CREATED' AND has_created AND expiry_published_at IS NULL;

-- +goose Down
DROP TABLE payments;
DROP TABLE payment_facts;
