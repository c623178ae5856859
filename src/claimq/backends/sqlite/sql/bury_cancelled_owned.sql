-- Release of a job whose cancel was requested: it goes to dead letters, not back to pending.
INSERT INTO claimq_dead ({dead_columns}, finished_at, reason, errors)
SELECT {dead_columns}, :now, 'cancelled', errors
FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
  AND cancel_requested = 1
RETURNING workflow_id
