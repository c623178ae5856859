-- Workflows newest first, ids below `before`.
SELECT {workflow_columns} FROM claimq_workflows
WHERE %(before)s IS NULL OR id < %(before)s
ORDER BY id DESC
LIMIT %(limit)s
