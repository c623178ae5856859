-- Live jobs, held workflow jobs among them (status 'held'), newest first, with the key columns
-- _in_state.sql reads (`limited`: _limited.sql); a held job's state is 'held'.
SELECT * FROM (SELECT {job_read}, concurrency_key, concurrency_limit, rate_key
               FROM {schema}.jobs
               UNION ALL
               SELECT {held_read}, concurrency_key, concurrency_limit, rate_key
               FROM {schema}.held) AS j
WHERE {find_where}
  AND (%(status)s::text IS NULL OR status = %(status)s)
  AND (%(state)s::text IS NULL OR {in_state})
ORDER BY id DESC
LIMIT %(limit)s
