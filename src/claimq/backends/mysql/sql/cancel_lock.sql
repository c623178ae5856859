SELECT id, status, errors FROM claimq_jobs WHERE id = %(id)s FOR UPDATE
