-- The gateway checks, in the transaction of a payment, that its merchant is ACTIVE, and keeps it
-- so until the payment commits (a share lock on the merchant's row: a status change then waits
-- for the payment, or the payment sees the change). A row lock needs the UPDATE right on the
-- table, which the gateway's database role does not have (issue 16 item 3: each service owns
-- its schema; the others may only read it). This function runs with its owner's rights, takes
-- that lock for its caller's transaction and does nothing else. Pinned search_path: a caller's
-- objects never stand in for the merchant tables.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION lock_merchant_for_payment(merchant_id uuid, company text, env text)
RETURNS TABLE (name text, wallet_address text, status text)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.name, m.wallet_address, m.status FROM merchant.merchants m
    WHERE m.id = merchant_id AND m.company_id = company AND m.environment = env
    FOR SHARE
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION lock_merchant_for_payment(uuid, text, text);
