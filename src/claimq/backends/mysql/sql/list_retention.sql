SELECT queue, archive_age, archive_rows, dead_age, dead_rows FROM claimq_retention ORDER BY queue
