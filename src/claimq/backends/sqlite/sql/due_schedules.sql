-- Inside the write transaction (one writer at a time): the scheduler that gets here first
-- fires the ticks and moves next_run_at on before any other reads the row.
SELECT s.*, s.payload AS payload_json FROM claimq_schedules s
WHERE NOT s.paused AND s.next_run_at <= :now
ORDER BY s.next_run_at
LIMIT :limit
