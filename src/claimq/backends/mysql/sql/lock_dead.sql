SELECT id FROM claimq_dead WHERE id = %(id)s FOR UPDATE
