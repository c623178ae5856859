DELETE FROM claimq_leases WHERE name = :name AND holder = :holder
