-- One queue's next jobs in claim order, locked; rows another claimer holds are passed over.
SELECT {job_columns}, {now} AS now
FROM claimq_jobs
WHERE queue = %(queue)s AND status = 'pending' AND run_at <= {now}
ORDER BY priority DESC, run_at, id
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
