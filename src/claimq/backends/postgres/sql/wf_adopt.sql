UPDATE {schema}.jobs SET workflow_id = %(workflow)s WHERE id = %(id)s
