-- The restored jobs (`ids`, locked) from dead letters to held, attempts 0, due now (`id`'s
-- payload and priority replaced when given). Each one's in-edges are resolved again as they
-- stand now: unresolved when the parent is restored too or live, or dead under 'wait' or
-- 'cancel' (wf_continue.sql buries such a job again); resolved when the parent is archived or
-- dead under 'run'. waiting: the unresolved ones.
WITH r AS (
    SELECT unnest(%(ids)s::bigint[]) AS id
), edges AS (
    SELECT d.child, d.parent,
           d.parent IN (SELECT id FROM r)
           OR EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = d.parent)
           OR EXISTS (SELECT 1 FROM {schema}.held h WHERE h.id = d.parent)
           OR (d.on_failure <> 'run'
               AND EXISTS (SELECT 1 FROM {schema}.dead x WHERE x.id = d.parent)) AS open
    FROM {schema}.deps d WHERE d.child IN (SELECT id FROM r)
), marked AS (
    UPDATE {schema}.deps d SET resolved = NOT e.open
    FROM edges e WHERE d.child = e.child AND d.parent = e.parent
), gone AS (
    DELETE FROM {schema}.dead x WHERE x.id IN (SELECT id FROM r) RETURNING x.*
), queue AS (
    INSERT INTO {schema}.queues (name, created_at, updated_at)
    SELECT DISTINCT queue, {now}, {now} FROM gone
    ON CONFLICT (name) DO NOTHING
)
INSERT INTO {schema}.held (id, queue, task, payload, tags, idempotency_key, priority, status,
                           attempts, max_attempts, run_at, created_at, updated_at, errors,
                           timeout_seconds, retry, workflow_id, waiting, run_if)
SELECT g.id, g.queue, g.task,
       CASE WHEN g.id = %(id)s THEN coalesce(%(payload)s::jsonb, g.payload) ELSE g.payload END,
       g.tags, g.idempotency_key,
       CASE WHEN g.id = %(id)s THEN coalesce(%(priority)s::int, g.priority) ELSE g.priority END,
       'pending', 0, g.max_attempts, {now}, g.created_at, {now}, g.errors, g.timeout_seconds,
       g.retry, g.workflow_id,
       (SELECT count(*) FROM edges e WHERE e.child = g.id AND e.open), g.run_if
FROM gone g
RETURNING id
