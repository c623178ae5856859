-- A bounded batch of per-key rate buckets that are full again and not throttled (the pruner),
-- never waiting on a row: such a row means what no row means (the claim reads only rows with
-- tat or throttled_until ahead), so it goes, and the table holds only the keys in use.
WITH doomed AS (
    SELECT k.queue, k.key FROM {schema}.rate_keys k
    WHERE coalesce(k.tat <= {now}, true) AND coalesce(k.throttled_until <= {now}, true)
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.rate_keys k USING doomed d WHERE k.queue = d.queue AND k.key = d.key
