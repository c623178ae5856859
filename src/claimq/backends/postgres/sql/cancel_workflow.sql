-- cancel() of every job of a workflow at once: held, pending and fetched ones to dead letters
-- ('cancelled'), processing ones flagged (and their workers told; one flagged already is not
-- counted again). The trigger
-- dead_wf_release then finds every dependent already buried.
WITH target AS (
    SELECT id, status FROM {schema}.jobs WHERE workflow_id = %(id)s ORDER BY id FOR UPDATE
), gone AS (
    DELETE FROM {schema}.jobs j USING target t
    WHERE j.id = t.id AND t.status IN ('pending', 'fetched')
    RETURNING j.*
), held AS (
    DELETE FROM {schema}.held h WHERE h.workflow_id = %(id)s RETURNING h.*
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
    WHERE j.id = t.id AND t.status = 'processing' AND NOT j.cancel_requested
    RETURNING j.id
), told AS (
    SELECT pg_notify('{schema}_cancel', id::text) FROM flagged
)
SELECT (SELECT count(*) FROM buried) + (SELECT count(*) FROM told) AS n
