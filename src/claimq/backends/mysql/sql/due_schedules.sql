-- The due schedules this scheduler takes: a row another scheduler holds is skipped (it is
-- firing that schedule's ticks right now), so every tick is enqueued by exactly one of them.
-- `now`: the transaction's time, for the plans and the writes after.
SELECT s.*, s.payload AS payload_json, {now} AS now
FROM claimq_schedules s
WHERE s.paused = FALSE AND s.next_run_at <= {now}
ORDER BY s.next_run_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
