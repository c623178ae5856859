DELETE FROM claimq_held WHERE id IN %(ids)s
