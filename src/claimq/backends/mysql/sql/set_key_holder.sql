UPDATE claimq_idempotency SET job_id = %(job_id)s, created_at = {now} WHERE `key` = %(key)s
