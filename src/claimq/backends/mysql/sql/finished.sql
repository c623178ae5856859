SELECT EXISTS (SELECT 1 FROM claimq_archive WHERE id = %(id)s)
       OR EXISTS (SELECT 1 FROM claimq_dead WHERE id = %(id)s) AS found
