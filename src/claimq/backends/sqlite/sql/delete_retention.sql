DELETE FROM claimq_retention WHERE queue = :queue RETURNING queue
