-- The gate between claim and handler: only the current owner of a fetched job may start it.
UPDATE {schema}.jobs j
SET status = 'processing',
    attempts = j.attempts + 1,
    started_at = {now},
    heartbeat_at = {now},
    lease_until = coalesce({now} + make_interval(secs => %(lease)s::float8), j.lease_until),
    updated_at = {now}
FROM unnest(%(ids)s::bigint[], %(tokens)s::uuid[]) AS o(id, token)
WHERE j.id = o.id AND j.claim_token = o.token AND j.status = 'fetched'
  AND NOT j.cancel_requested
RETURNING j.id, j.attempts
