DELETE FROM {schema}.idempotency_keys WHERE key = %(key)s AND job_id = %(job_id)s
