SELECT parent, child, on_failure, resolved FROM claimq_deps
WHERE workflow_id = :id
ORDER BY child, position
