-- Resurrect: where each of these jobs is now, in one statement (one snapshot: a job moving
-- between tables is seen in exactly one), with its task and dead-letter reason. A job in no
-- table (pruned) is taken for archived by the caller.
SELECT id, 'live' AS place, task, NULL AS reason FROM claimq_jobs WHERE id IN %(ids)s
UNION ALL SELECT id, 'live', task, NULL FROM claimq_held WHERE id IN %(ids)s
UNION ALL SELECT id, 'archive', task, NULL FROM claimq_archive WHERE id IN %(ids)s
UNION ALL SELECT id, 'dead', task, reason FROM claimq_dead WHERE id IN %(ids)s
