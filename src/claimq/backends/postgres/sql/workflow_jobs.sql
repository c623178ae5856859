-- Every job of a workflow wherever it is, by id, in one statement (get_job.sql's columns).
SELECT {job_read}, NULL::timestamptz AS finished_at, NULL::jsonb AS result, NULL::text AS reason
FROM {schema}.jobs WHERE workflow_id = %(id)s
UNION ALL
SELECT {held_read}, NULL, NULL, NULL FROM {schema}.held WHERE workflow_id = %(id)s
UNION ALL
SELECT {archive_read}, finished_at, result, NULL FROM {schema}.archive WHERE workflow_id = %(id)s
UNION ALL
SELECT {dead_read}, finished_at, NULL, reason FROM {schema}.dead WHERE workflow_id = %(id)s
ORDER BY id
