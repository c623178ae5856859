-- Every circuit breaker; failures outside a closed breaker's window no longer count.
SELECT queue, task, failure_limit, window_seconds, cooldown_seconds, state,
       CASE WHEN window_until > {now} OR state <> 'closed' THEN failures ELSE 0 END AS failures,
       opened_at, open_until, probe_id
FROM claimq_breakers
ORDER BY queue, task
