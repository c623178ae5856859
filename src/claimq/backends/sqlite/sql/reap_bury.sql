INSERT INTO claimq_dead ({dead_columns}, finished_at, reason, errors)
SELECT {dead_columns}, :now, :reason, json_insert(claimq_errors(errors), '$[#]', json(:error))
FROM claimq_jobs
WHERE id = :id AND status IN ('fetched', 'processing') AND lease_until < :now
RETURNING workflow_id
