-- spawn's fence: the spawner, only while this token holds it in processing; its workflow's
-- default policy.
SELECT j.task, j.workflow_id, w.on_failure
FROM claimq_jobs j LEFT JOIN claimq_workflows w ON w.id = j.workflow_id
WHERE j.id = :id AND j.claim_token = :token AND j.status = 'processing'
