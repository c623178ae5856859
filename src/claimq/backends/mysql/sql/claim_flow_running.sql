-- A flow-controlled queue's in-flight jobs per concurrency key (READ COMMITTED: the latest).
SELECT concurrency_key, count(*) AS n
FROM claimq_jobs
WHERE queue = %(queue)s AND status IN ('fetched', 'processing') AND concurrency_key IS NOT NULL
GROUP BY concurrency_key
