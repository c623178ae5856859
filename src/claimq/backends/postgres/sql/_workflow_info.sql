-- A workflow row `w` with its jobs counted by status (jsonb) and the last finish among them.
SELECT w.id, w.name, w.idempotency_key AS key, w.on_failure, w.created_at,
       (SELECT coalesce(jsonb_object_agg(s.status, s.n), '{}') FROM (
            SELECT status, count(*) AS n FROM (
                SELECT status FROM {schema}.jobs WHERE workflow_id = w.id
                UNION ALL SELECT 'held' FROM {schema}.held WHERE workflow_id = w.id
                UNION ALL SELECT 'succeeded' FROM {schema}.archive WHERE workflow_id = w.id
                UNION ALL SELECT 'dead' FROM {schema}.dead WHERE workflow_id = w.id) j
            GROUP BY status) s) AS counts,
       greatest((SELECT max(finished_at) FROM {schema}.archive WHERE workflow_id = w.id),
                (SELECT max(finished_at) FROM {schema}.dead WHERE workflow_id = w.id))
           AS last_finished
FROM {schema}.workflows w
