-- Cancel of a job no handler has started: straight to dead letters.
INSERT INTO claimq_dead ({dead_columns}, finished_at, reason, errors)
SELECT {dead_columns}, :now, 'cancelled', errors
FROM claimq_jobs
WHERE id = :id AND status IN ('pending', 'fetched')
RETURNING workflow_id
