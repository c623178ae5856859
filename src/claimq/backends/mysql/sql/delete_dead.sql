DELETE FROM claimq_dead WHERE id = %(id)s
