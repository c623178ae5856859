-- The scheduler's next wake: seconds from the database's time to the earliest tick not enqueued
-- yet of the unpaused schedules (NULL: none). The difference is taken here, on the server's
-- clock, so that a worker whose clock disagrees with the database's still wakes when the
-- database finds the tick due. min() over the partial index schedules_due: one index probe.
SELECT extract(epoch FROM min(s.next_run_at) - {now})::float8 AS seconds
FROM {schema}.schedules s
WHERE NOT s.paused
