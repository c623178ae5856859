-- retry_workflow: the workflow's dead letters that failed themselves, by id.
SELECT id FROM {schema}.dead
WHERE workflow_id = %(id)s AND reason <> 'dependency_failed'
ORDER BY id
