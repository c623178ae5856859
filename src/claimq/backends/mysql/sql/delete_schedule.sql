DELETE FROM claimq_schedules WHERE name = %(name)s
