DELETE FROM claimq_retention WHERE queue = %(queue)s
