-- One job wherever it lives (live, held, archive or dead letters), in one statement: one
-- snapshot, so that a job moving between the tables meanwhile is read in one of them, never in
-- none. By name (jobs has columns the others lack, such as trace_context).
SELECT {job_read}, NULL::timestamptz AS finished_at, NULL::jsonb AS result, NULL::text AS reason
FROM {schema}.jobs WHERE id = %(id)s
UNION ALL
SELECT {held_read}, NULL, NULL, NULL FROM {schema}.held WHERE id = %(id)s
UNION ALL
SELECT {archive_read}, finished_at, result, NULL FROM {schema}.archive WHERE id = %(id)s
UNION ALL
SELECT {dead_read}, finished_at, NULL, reason FROM {schema}.dead WHERE id = %(id)s
