SELECT id, host, pid, queues, concurrency, version, started_at, last_seen_at, in_flight,
       dead_at, tasks, TIMESTAMPDIFF(MICROSECOND, last_seen_at, {now}) / 1e6 AS silent_for
FROM claimq_workers
ORDER BY started_at, id
