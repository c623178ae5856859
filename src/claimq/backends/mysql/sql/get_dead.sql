SELECT *, 'dead' AS status FROM claimq_dead WHERE id = %(id)s
