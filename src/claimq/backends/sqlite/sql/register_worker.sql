-- A worker process writes its row at start; a row of the same id is refreshed, alive again.
INSERT INTO claimq_workers (id, host, pid, queues, concurrency, version, started_at,
                            last_seen_at, in_flight, tasks)
VALUES (:id, :host, :pid, :queues, :concurrency, :version, :now, :now, :in_flight,
        :tasks)
ON CONFLICT (id) DO UPDATE
SET host = excluded.host, pid = excluded.pid, queues = excluded.queues,
    concurrency = excluded.concurrency, version = excluded.version,
    last_seen_at = excluded.last_seen_at, in_flight = excluded.in_flight, dead_at = NULL,
    tasks = excluded.tasks
