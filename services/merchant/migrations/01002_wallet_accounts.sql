-- Wallets derive from one account-level extended public key per environment (issue 16, item 2):
-- live from m/44'/60'/0', test from m/44'/60'/1'. Before, every wallet, test or live, took the
-- next index of one sequence in account 0' of a seed the service held.
--
-- Existing wallets keep their records, addresses included: they are all in account 0. Live
-- stays in account 0 and continues the old sequence, so no index any older wallet had (or any
-- replica took) is handed out again; test starts afresh in account 1.

-- +goose Up
ALTER TABLE wallet_users ADD COLUMN account bigint NOT NULL DEFAULT 0;
ALTER TABLE wallet_users ALTER COLUMN account DROP DEFAULT;
ALTER TABLE wallet_users DROP CONSTRAINT wallet_users_derivation_index_key;
ALTER TABLE wallet_users ADD CONSTRAINT wallet_users_account_index_key UNIQUE (account, derivation_index);
ALTER SEQUENCE wallet_derivation_index RENAME TO wallet_index_live;
CREATE SEQUENCE wallet_index_test AS bigint MINVALUE 0 START 0;

-- +goose Down
-- Only while no test wallet has been made in account 1: their indexes would collide.
DROP SEQUENCE wallet_index_test;
ALTER SEQUENCE wallet_index_live RENAME TO wallet_derivation_index;
ALTER TABLE wallet_users DROP CONSTRAINT wallet_users_account_index_key;
ALTER TABLE wallet_users ADD CONSTRAINT wallet_users_derivation_index_key UNIQUE (derivation_index);
ALTER TABLE wallet_users DROP COLUMN account;
