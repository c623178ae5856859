-- purge_idempotency.sql a bounded batch at a time (the pruner): the keys no longer held
-- (_key_held.sql with every live status and the longest window), locked for their DELETE
-- (delete_keys.sql); SKIP LOCKED: never waits on a key being taken.
SELECT k.`key` FROM claimq_idempotency k
WHERE NOT {key_held}
LIMIT %(batch)s
FOR UPDATE SKIP LOCKED
