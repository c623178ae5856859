-- A new workflow; no row when its idempotency key names one already (ON CONFLICT waits for a
-- concurrent insert of the key to commit or roll back first).
INSERT INTO {schema}.workflows (name, idempotency_key, on_failure, created_at)
VALUES (%(name)s, %(key)s, %(on_failure)s, {now})
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING id
