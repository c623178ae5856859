-- The scheduler's next wake: seconds from the database's time to the earliest tick not enqueued
-- yet of the unpaused schedules (NULL: none). The difference is taken here, on the server's
-- clock, so that a worker whose clock disagrees with the database's still wakes when the
-- database finds the tick due. MIN() over the index claimq_schedules_due (paused, next_run_at):
-- one index probe. `/ 1e6`: a double (a decimal division would keep 4 digits).
SELECT TIMESTAMPDIFF(MICROSECOND, {now}, MIN(s.next_run_at)) / 1e6 AS seconds
FROM claimq_schedules s
WHERE s.paused = FALSE
