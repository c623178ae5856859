-- run_now: the pending jobs among the ids that wait for a later run_at, locked until the UPDATE
-- (no UPDATE … RETURNING here). By PRIMARY (FORCE INDEX): through the in-flight index (the
-- optimizer's choice when the ids are many of a table's pending rows) it would lock the index
-- records of every pending job, the due ones too, before their rows, and wait for a row a claim
-- holds while holding the index record that claim's UPDATE needs: a deadlock (issue 24).
SELECT id FROM claimq_jobs FORCE INDEX (PRIMARY)
WHERE id IN %(ids)s AND status = 'pending' AND run_at > {now}
FOR UPDATE
