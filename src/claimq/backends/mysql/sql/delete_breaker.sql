-- A task's circuit breaker in a queue removed.
DELETE FROM claimq_breakers WHERE queue = %(queue)s AND task = %(task)s
