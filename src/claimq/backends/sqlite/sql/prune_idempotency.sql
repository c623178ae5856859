-- purge_idempotency.sql a bounded batch at a time (the pruner): keys no longer held
-- (_key_held.sql with every live status and the longest window, :since).
DELETE FROM claimq_idempotency WHERE key IN (
    SELECT k.key FROM claimq_idempotency k
    WHERE NOT {key_held}
    LIMIT :batch
)
