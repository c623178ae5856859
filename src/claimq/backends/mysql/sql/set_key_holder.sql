UPDATE claimq_idempotency SET job_id = %(job_id)s, created_at = {now}, finished_at = NULL
WHERE `key` = %(key)s
