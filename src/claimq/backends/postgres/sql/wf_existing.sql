-- The workflow of an idempotency key, and its jobs' ids wherever they are, by id.
SELECT w.id,
       ARRAY(SELECT id FROM {schema}.jobs WHERE workflow_id = w.id
             UNION ALL SELECT id FROM {schema}.held WHERE workflow_id = w.id
             UNION ALL SELECT id FROM {schema}.archive WHERE workflow_id = w.id
             UNION ALL SELECT id FROM {schema}.dead WHERE workflow_id = w.id
             ORDER BY 1) AS job_ids
FROM {schema}.workflows w WHERE w.idempotency_key = %(key)s
