-- A worker process writes its row at start; a row of the same id (a restart that kept it) is
-- refreshed and alive again.
INSERT INTO {schema}.workers (id, host, pid, queues, concurrency, version, started_at,
                              last_seen_at, in_flight, tasks)
VALUES (%(id)s, %(host)s, %(pid)s, %(queues)s::text[], %(concurrency)s, %(version)s, {now},
        {now}, %(in_flight)s, %(tasks)s::text[])
ON CONFLICT (id) DO UPDATE
SET host = EXCLUDED.host, pid = EXCLUDED.pid, queues = EXCLUDED.queues,
    concurrency = EXCLUDED.concurrency, version = EXCLUDED.version,
    last_seen_at = EXCLUDED.last_seen_at, in_flight = EXCLUDED.in_flight, dead_at = NULL,
    tasks = EXCLUDED.tasks
