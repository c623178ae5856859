{workflow_info}
WHERE w.id = %(id)s
