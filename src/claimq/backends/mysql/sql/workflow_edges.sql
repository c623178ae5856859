SELECT parent, child, on_failure, resolved FROM claimq_deps
WHERE workflow_id = %(workflow_id)s
ORDER BY child, parent
