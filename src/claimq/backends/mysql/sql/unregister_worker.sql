DELETE FROM claimq_workers WHERE id = %(id)s RETURNING id
