-- Not started yet (pending or fetched, or held: a workflow job waiting for its dependencies):
-- straight to dead letters (the trigger dead_wf_release then applies the workflow's rule to
-- its dependents). Running: flag it and notify; its worker heartbeats at once (or at its next
-- heartbeat, if the notification is lost).
WITH target AS (
    SELECT id, status FROM {schema}.jobs WHERE id = %(id)s FOR UPDATE
), gone AS (
    DELETE FROM {schema}.jobs j USING target t
    WHERE j.id = t.id AND t.status IN ('pending', 'fetched')
    RETURNING j.*
), held AS (
    DELETE FROM {schema}.held h WHERE h.id = %(id)s RETURNING h.*
), buried AS (
    INSERT INTO {schema}.dead ({dead_columns}, run_if, finished_at, reason, errors)
    SELECT {dead_columns}, NULL, {now}, 'cancelled', errors
    FROM gone
    UNION ALL
    SELECT {dead_columns}, run_if, {now}, 'cancelled', errors
    FROM held
    RETURNING id
), flagged AS (
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
