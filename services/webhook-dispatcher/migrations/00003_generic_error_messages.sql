-- The delivery log's error messages become the few fixed ones partners may read (issue 16,
-- domain.Fail*): the entries written before named the addresses a host name resolved to and
-- told a refused port, an unknown name and a blocked address apart. The details are not kept
-- here; the service log had them.

-- +goose Up
UPDATE deliveries SET error_message = CASE
    WHEN error_message LIKE 'endpoint answered %' THEN substr(error_message, length('endpoint answered ') + 1)
    WHEN error_message LIKE 'timeout:%' THEN 'timed out'
    WHEN error_message LIKE 'tls: %' THEN 'TLS error'
    WHEN error_message IN ('invalid endpoint url', 'blocked address: only https endpoints are allowed')
        THEN 'endpoint URL not allowed'
    WHEN error_message LIKE 'dns: %' OR error_message LIKE 'blocked address: %'
        OR error_message = 'connection refused' OR error_message LIKE 'network error: %dial %'
        THEN 'could not connect'
    WHEN error_message = 'connection reset by the endpoint' OR error_message LIKE 'network error: %'
        THEN 'no valid HTTP response'
    WHEN error_message LIKE 'attempt cancelled%' THEN 'attempt cancelled'
    WHEN error_message LIKE 'signing failed%' THEN 'signing failed'
    ELSE error_message
END
WHERE error_message IS NOT NULL;

-- +goose Down
-- Nothing to undo: the former messages are what this migration removes.
SELECT 1;
