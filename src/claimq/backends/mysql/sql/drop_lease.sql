DELETE FROM claimq_leases WHERE name = %(name)s AND holder = %(holder)s
