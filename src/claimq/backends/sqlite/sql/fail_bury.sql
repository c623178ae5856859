-- A failed attempt that ends the job (claimq.job.ends_job: permanent, or no attempts left).
INSERT INTO claimq_dead ({dead_columns}, finished_at, reason, errors)
SELECT {dead_columns}, :now, :reason, json_insert(claimq_errors(errors), '$[#]', json(:error))
FROM claimq_jobs
WHERE id = :id AND claim_token = :token AND status IN ('fetched', 'processing')
RETURNING workflow_id
