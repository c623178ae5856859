-- ctx.ensure_owned(): renews one lease. No SKIP LOCKED: a row another transaction holds (this
-- worker's own heartbeat, the reaper) is waited on (under a short lock_timeout), and the token
-- and status are checked again on the row that transaction left, so the answer is the job's
-- owner, never "busy".
UPDATE {schema}.jobs j
SET lease_until = {now} + make_interval(secs => coalesce(%(lease)s::float8, q.lease_seconds)),
    heartbeat_at = {now}
FROM {schema}.queues q
WHERE j.id = %(id)s
  AND j.claim_token::text = %(token)s
  AND j.status IN ('fetched', 'processing')
  AND q.name = j.queue
RETURNING j.id, j.cancel_requested
