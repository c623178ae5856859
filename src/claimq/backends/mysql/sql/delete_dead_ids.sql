DELETE FROM claimq_dead WHERE id IN %(ids)s
