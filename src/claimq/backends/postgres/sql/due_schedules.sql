-- The due schedules this scheduler takes: a row another scheduler holds is skipped (it is
-- firing that schedule's ticks right now), so every tick is enqueued by exactly one of them.
SELECT s.*, s.payload::text AS payload_json, {now} AS now
FROM {schema}.schedules s
WHERE NOT s.paused AND s.next_run_at <= {now}
ORDER BY s.next_run_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
