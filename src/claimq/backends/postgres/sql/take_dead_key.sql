-- A resurrected job takes its idempotency key when the key has no row. ON CONFLICT waits for
-- a concurrent taker to finish, then yields no row (the holder is read, locked, afterwards).
INSERT INTO {schema}.idempotency_keys (key, job_id, created_at)
VALUES (%(key)s, %(id)s, {now})
ON CONFLICT (key) DO NOTHING
RETURNING job_id
