-- One statement renews every lease a worker holds. SKIP LOCKED: a row another transaction has
-- locked (a handler's own long transaction, an operator's SELECT … FOR UPDATE) is passed over
-- rather than waited on, so one locked job cannot cost every other job its lease. A row passed
-- over that still shows this token in the statement's snapshot comes back busy (not renewed,
-- not lost: the next beat tries again); a row without the token is lost.
WITH held AS (
    SELECT j.id
    FROM {schema}.jobs j
    JOIN unnest(%(ids)s::bigint[], %(tokens)s::uuid[]) AS o(id, token)
      ON j.id = o.id AND j.claim_token = o.token
    WHERE j.status IN ('fetched', 'processing')
    FOR UPDATE OF j SKIP LOCKED
), renewed AS (
    UPDATE {schema}.jobs j
    SET lease_until = {now} + make_interval(secs => coalesce(%(lease)s::float8, q.lease_seconds)),
        heartbeat_at = {now}
    FROM held, {schema}.queues q
    WHERE j.id = held.id
      AND q.name = j.queue
    RETURNING j.id, j.cancel_requested
)
SELECT id, cancel_requested, false AS busy FROM renewed
UNION ALL
SELECT j.id, false, true
FROM {schema}.jobs j
JOIN unnest(%(ids)s::bigint[], %(tokens)s::uuid[]) AS o(id, token)
  ON j.id = o.id AND j.claim_token = o.token
WHERE j.status IN ('fetched', 'processing')
  AND j.id NOT IN (SELECT id FROM held)
