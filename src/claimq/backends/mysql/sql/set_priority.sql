UPDATE claimq_jobs SET priority = %(priority)s, updated_at = {now}
WHERE id = %(id)s AND status = 'pending'
