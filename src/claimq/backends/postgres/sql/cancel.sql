-- Not started yet (pending or fetched, or held: a workflow job waiting for its dependencies):
-- straight to dead letters. Running: flag it and notify; its worker heartbeats at once (or at
-- its next heartbeat, if the notification is lost).
WITH target AS (
    SELECT id, status FROM {schema}.jobs WHERE id = %(id)s FOR UPDATE
), held AS (
    DELETE FROM {schema}.held h WHERE h.id = %(id)s RETURNING h.*
), {bury_cancelled}, flagged AS (
    UPDATE {schema}.jobs j SET cancel_requested = true, updated_at = {now}
    FROM target t
    WHERE j.id = t.id AND t.status = 'processing'
    RETURNING j.id
)
SELECT 'cancelled' AS outcome FROM buried
UNION ALL SELECT 'cancel_requested' FROM flagged
    -- tells the job's worker at once, wherever it runs; its next heartbeat is the fallback
    WHERE pg_notify('{schema}_cancel', (SELECT id::text FROM flagged)) IS NOT NULL
UNION ALL SELECT 'finished' FROM {schema}.archive WHERE id = %(id)s
UNION ALL SELECT 'finished' FROM {schema}.dead WHERE id = %(id)s
