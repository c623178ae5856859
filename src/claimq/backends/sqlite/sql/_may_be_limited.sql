-- A necessary condition of _limited.sql, cheap to ask of every due job `j`: it has a key, or
-- its queue has a setting that can hold it back (the queues' list is read once per statement).
-- _in_state.sql asks _limited.sql only of the jobs that pass it.
(j.concurrency_key IS NOT NULL OR j.rate_key IS NOT NULL
 OR j.queue IN (SELECT q.name FROM claimq_queues q
                WHERE NOT q.active OR q.paused OR q.throttled_until > :now
                   OR q.max_workers IS NOT NULL))
