-- retry_workflow: the workflow's dead letters that failed themselves (not for a dependency),
-- locked by id, with their idempotency keys.
SELECT id, idempotency_key FROM claimq_dead
WHERE workflow_id = %(workflow_id)s AND reason <> 'dependency_failed'
ORDER BY id
FOR UPDATE
