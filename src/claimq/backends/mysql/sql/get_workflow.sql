SELECT {workflow_columns} FROM claimq_workflows WHERE id = %(id)s
