-- spawn's fence: the job, locked, while this token holds it in processing (no row: it does
-- not), with its workflow's default policy.
SELECT j.id, j.task, j.workflow_id, w.on_failure
FROM {schema}.jobs j LEFT JOIN {schema}.workflows w ON w.id = j.workflow_id
WHERE j.id = %(id)s AND j.claim_token = %(token)s AND j.status = 'processing'
FOR UPDATE OF j
