-- By PRIMARY (FORCE INDEX): through the in-flight index, which the optimizer may prefer for
-- `status = 'pending'` on a small table, the job's index record would be locked before its row,
-- and a claim holding the row needs that record for its UPDATE: a deadlock (issue 24).
UPDATE claimq_jobs FORCE INDEX (PRIMARY)
SET priority = %(priority)s, updated_at = {now}
WHERE id = %(id)s AND status = 'pending'
