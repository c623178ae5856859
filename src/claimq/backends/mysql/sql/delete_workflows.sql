-- Finished workflows (finished_workflows.sql) with their edges.
DELETE w, e FROM claimq_workflows w LEFT JOIN claimq_deps e ON e.workflow_id = w.id
WHERE w.id IN %(ids)s
