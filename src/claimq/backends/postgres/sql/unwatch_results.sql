DELETE FROM {schema}.result_waiters
WHERE job_id = ANY(%(ids)s::bigint[]) AND waiter = %(waiter)s::uuid
