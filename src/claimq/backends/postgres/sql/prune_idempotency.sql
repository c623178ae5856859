-- purge_idempotency.sql a bounded batch at a time (the pruner), never waiting on a row: keys
-- no longer held (_key_held.sql with every live status and the longest window).
WITH doomed AS (
    SELECT k.key FROM {schema}.idempotency_keys k
    WHERE NOT {key_held}
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.idempotency_keys k USING doomed d WHERE k.key = d.key
