SELECT fraction, note, attempt, updated_at FROM {schema}.progress WHERE job_id = %(id)s
