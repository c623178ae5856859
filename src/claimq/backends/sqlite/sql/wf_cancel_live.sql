-- cancel_workflow: its pending and fetched jobs straight to dead letters (the caller deletes
-- the ids returned).
INSERT INTO claimq_dead ({dead_columns}, finished_at, reason, errors)
SELECT {dead_columns}, :now, 'cancelled', errors
FROM claimq_jobs
WHERE workflow_id = :id AND status IN ('pending', 'fetched')
RETURNING id
