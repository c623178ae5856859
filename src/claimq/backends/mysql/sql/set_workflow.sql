-- Jobs just inserted (or a running spawner outside any workflow) join a workflow.
UPDATE claimq_jobs SET workflow_id = %(workflow_id)s WHERE id IN %(ids)s
