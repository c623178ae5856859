UPDATE {schema}.jobs j
SET lease_until = {now} + make_interval(secs => coalesce(%(lease)s::float8, q.lease_seconds)),
    heartbeat_at = {now}
FROM unnest(%(ids)s::bigint[], %(tokens)s::uuid[]) AS o(id, token), {schema}.queues q
WHERE j.id = o.id AND j.claim_token = o.token AND j.status IN ('fetched', 'processing')
  AND q.name = j.queue
RETURNING j.id, j.cancel_requested
