-- Every job of a workflow wherever it is, by id, in one statement (one snapshot; get_job.sql's
-- columns).
SELECT {job_read}, NULL AS finished_at, NULL AS result, NULL AS reason
FROM claimq_jobs WHERE workflow_id = %(workflow_id)s
UNION ALL
SELECT {held_read}, NULL, NULL, NULL FROM claimq_held WHERE workflow_id = %(workflow_id)s
UNION ALL
SELECT {archive_read}, finished_at, result, NULL
FROM claimq_archive WHERE workflow_id = %(workflow_id)s
UNION ALL
SELECT {dead_read}, finished_at, NULL, reason FROM claimq_dead WHERE workflow_id = %(workflow_id)s
ORDER BY id
