DELETE FROM claimq_archive WHERE id IN %(ids)s
