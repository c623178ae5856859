SELECT * FROM claimq_jobs WHERE id = %(id)s
