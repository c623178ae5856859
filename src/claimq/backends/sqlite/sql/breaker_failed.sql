-- A failed job's task's circuit breaker in its queue (a Throttled is not the task's failure):
-- closed, the failures within the window are counted and failure_limit of them open it; a
-- half_open one's probe failed: open again; an open one stays as it is.
UPDATE claimq_breakers
SET failures = CASE WHEN window_until > :now THEN failures ELSE 0 END + 1,
    window_until = CASE WHEN window_until > :now THEN window_until
                        ELSE :now + window_seconds END,
    state = CASE WHEN state = 'half_open'
                      OR CASE WHEN window_until > :now THEN failures ELSE 0 END + 1
                         >= failure_limit
                 THEN 'open' ELSE state END,
    opened_at = CASE WHEN state = 'half_open'
                          OR CASE WHEN window_until > :now THEN failures ELSE 0 END + 1
                             >= failure_limit
                     THEN :now ELSE opened_at END,
    open_until = CASE WHEN state = 'half_open'
                           OR CASE WHEN window_until > :now THEN failures ELSE 0 END + 1
                              >= failure_limit
                      THEN :now + cooldown_seconds ELSE open_until END,
    updated_at = :now
WHERE state <> 'open'
  AND (queue, task) = (SELECT queue, task FROM claimq_jobs WHERE id = :id
                       UNION ALL SELECT queue, task FROM claimq_dead WHERE id = :id LIMIT 1)
