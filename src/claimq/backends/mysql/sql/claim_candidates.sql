-- One queue's next jobs in claim order, locked; rows another claimer holds are passed over, and
-- (with %(skipping)s) the jobs of the tasks the claimer cannot run, for another worker.
SELECT {job_columns}, {now} AS now
FROM claimq_jobs
WHERE queue = %(queue)s AND status = 'pending' AND run_at <= {now}
  AND (NOT %(skipping)s OR task NOT IN %(skip)s)
ORDER BY priority DESC, run_at, id
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
