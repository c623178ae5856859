-- A bounded batch of per-key rate buckets that are full again and not throttled (the pruner):
-- such a row means what no row means (rate_key_state.sql), so it goes, and the table holds
-- only the keys in use. Locked for their DELETE (delete_rate_keys.sql); SKIP LOCKED: never
-- waits on a key a claim is spending.
SELECT k.queue, k.rate_key FROM claimq_rate_keys k
WHERE coalesce(k.tat <= {now}, TRUE) AND coalesce(k.throttled_until <= {now}, TRUE)
LIMIT %(batch)s
FOR UPDATE SKIP LOCKED
