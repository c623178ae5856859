-- One job wherever it lives (live, held, archive or dead letters), in one statement: one
-- snapshot, so that a job moving between the tables meanwhile is read in one of them, never in
-- none. Columns a table lacks are NULL.
SELECT {job_read}, NULL AS finished_at, NULL AS result, NULL AS reason
FROM claimq_jobs WHERE id = %(id)s
UNION ALL
SELECT {held_read}, NULL, NULL, NULL FROM claimq_held WHERE id = %(id)s
UNION ALL
SELECT {archive_read}, finished_at, result, NULL FROM claimq_archive WHERE id = %(id)s
UNION ALL
SELECT {dead_read}, finished_at, NULL, reason FROM claimq_dead WHERE id = %(id)s
