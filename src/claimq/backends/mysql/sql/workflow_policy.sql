SELECT on_failure FROM claimq_workflows WHERE id = %(id)s
