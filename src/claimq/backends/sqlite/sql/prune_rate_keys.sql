-- A bounded batch of per-key rate buckets that are full again and not throttled (the pruner):
-- such a row means what no row means (rate_key_state.sql), so it goes, and the table holds
-- only the keys in use.
DELETE FROM claimq_rate_keys WHERE rowid IN (
    SELECT rowid FROM claimq_rate_keys
    WHERE coalesce(tat <= :now, 1) AND coalesce(throttled_until <= :now, 1)
    LIMIT :batch
)
