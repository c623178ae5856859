-- %(n)s failed attempts of a task in a queue (a Throttled is not the task's failure): its
-- circuit breaker, closed, counts the failures within its window and failure_limit of them open
-- it; a half_open one's probe failed: open again; an open one stays as it is. (A single-table
-- UPDATE assigns left to right: each assignment reads only columns assigned after it, so all
-- read the row as it was.)
UPDATE claimq_breakers
SET opened_at = CASE WHEN state = 'half_open'
                          OR CASE WHEN window_until > {now} THEN failures ELSE 0 END + %(n)s
                             >= failure_limit
                     THEN {now} ELSE opened_at END,
    open_until = CASE WHEN state = 'half_open'
                           OR CASE WHEN window_until > {now} THEN failures ELSE 0 END + %(n)s
                              >= failure_limit
                      THEN TIMESTAMPADD(MICROSECOND, CAST(cooldown_seconds * 1000000 AS INT),
                                        {now})
                      ELSE open_until END,
    state = CASE WHEN state = 'half_open'
                      OR CASE WHEN window_until > {now} THEN failures ELSE 0 END + %(n)s
                         >= failure_limit
                 THEN 'open' ELSE state END,
    failures = CASE WHEN window_until > {now} THEN failures ELSE 0 END + %(n)s,
    window_until = CASE WHEN window_until > {now} THEN window_until
                        ELSE TIMESTAMPADD(MICROSECOND, CAST(window_seconds * 1000000 AS INT),
                                          {now}) END,
    updated_at = {now}
WHERE queue = %(queue)s AND task = %(task)s AND state <> 'open'
