SELECT parent, child, on_failure, resolved FROM {schema}.deps
WHERE workflow_id = %(id)s
ORDER BY child, position
