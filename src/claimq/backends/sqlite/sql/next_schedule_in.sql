-- The scheduler's next wake: seconds from `now` (the App's clock, as every SQLite statement's)
-- to the earliest tick not enqueued yet of the unpaused schedules (NULL: none). min() over the
-- partial index claimq_schedules_due: one index probe.
SELECT min(s.next_run_at) - :now AS seconds
FROM claimq_schedules s
WHERE NOT s.paused
