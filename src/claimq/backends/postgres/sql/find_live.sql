-- Live jobs, held workflow jobs among them (status 'held'), newest first; the jobs table's
-- rows by _job_state.sql (limited among them), the held ones as 'held'.
SELECT * FROM (
    SELECT {job_read} FROM {schema}.jobs j
    WHERE {find_where}
      AND (%(status)s::text IS NULL OR status = %(status)s)
      AND (%(state)s::text IS NULL OR {job_state} = %(state)s)
    UNION ALL
    SELECT {held_read} FROM {schema}.held
    WHERE {find_where}
      AND (%(status)s::text IS NULL OR %(status)s = 'held')
      AND (%(state)s::text IS NULL OR %(state)s = 'held')) AS live
ORDER BY id DESC
LIMIT %(limit)s
