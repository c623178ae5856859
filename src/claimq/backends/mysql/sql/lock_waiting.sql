-- run_now: the pending jobs among the ids that wait for a later run_at, locked until the UPDATE
-- (no UPDATE … RETURNING here).
SELECT id FROM claimq_jobs
WHERE id IN %(ids)s AND status = 'pending' AND run_at > {now}
FOR UPDATE
