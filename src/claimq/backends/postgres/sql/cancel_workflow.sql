-- cancel() of every job of a workflow at once (cancel.sql's rule over the workflow's rows):
-- held, pending and fetched ones to dead letters ('cancelled'), processing ones flagged (and
-- their workers told; one flagged already is not counted again).
WITH target AS (
    SELECT id, status FROM {schema}.jobs WHERE workflow_id = %(id)s ORDER BY id FOR UPDATE
), held AS (
    DELETE FROM {schema}.held h WHERE h.workflow_id = %(id)s RETURNING h.*
), {bury_cancelled}, flagged AS (
    UPDATE {schema}.jobs j SET cancel_requested = true, updated_at = {now}
    FROM target t
    WHERE j.id = t.id AND t.status = 'processing' AND NOT j.cancel_requested
    RETURNING j.id
), told AS (
    SELECT pg_notify('{schema}_cancel', id::text) FROM flagged
)
SELECT (SELECT count(*) FROM buried) + (SELECT count(*) FROM told) AS n
