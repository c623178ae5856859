SELECT id, host, pid, queues, concurrency, version, started_at, last_seen_at, in_flight,
       dead_at, tasks, :now - last_seen_at AS silent_for
FROM claimq_workers
ORDER BY started_at, id
