-- A worker process writes its row at start; a row of the same id (a restart that kept it) is
-- refreshed and alive again.
INSERT INTO claimq_workers (id, host, pid, queues, concurrency, version, started_at,
                            last_seen_at, in_flight, tasks)
VALUES (%(id)s, %(host)s, %(pid)s, %(queues)s, %(concurrency)s, %(version)s, {now}, {now},
        %(in_flight)s, %(tasks)s)
ON DUPLICATE KEY UPDATE
    host = VALUES(host), pid = VALUES(pid), queues = VALUES(queues),
    concurrency = VALUES(concurrency), version = VALUES(version),
    last_seen_at = VALUES(last_seen_at), in_flight = VALUES(in_flight), dead_at = NULL,
    tasks = VALUES(tasks)
