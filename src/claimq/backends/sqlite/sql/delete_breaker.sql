DELETE FROM claimq_breakers WHERE queue = :queue AND task = :task
