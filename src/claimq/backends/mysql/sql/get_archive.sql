SELECT *, 'succeeded' AS status FROM claimq_archive WHERE id = %(id)s
