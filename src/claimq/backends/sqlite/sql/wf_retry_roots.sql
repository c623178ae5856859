-- retry_workflow: the dead letters that failed themselves (the cascade brings back the rest).
SELECT id FROM claimq_dead
WHERE workflow_id = :id AND reason <> 'dependency_failed'
ORDER BY id
