DELETE FROM claimq_jobs WHERE id IN %(ids)s
