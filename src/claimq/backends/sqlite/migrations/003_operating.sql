-- Operating claimq (issue 14): the worker registry, the enqueuer's trace context, and the
-- indexes the stats read.

-- One row per running worker process: written at its start, refreshed with its heartbeat,
-- deleted at a clean stop. A row silent for too long is marked dead (dead_at), later pruned.
CREATE TABLE claimq_workers (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    queues       TEXT,  -- a JSON array; NULL: every queue
    concurrency  INTEGER NOT NULL,
    version      TEXT NOT NULL,
    started_at   REAL NOT NULL,
    last_seen_at REAL NOT NULL,
    in_flight    INTEGER NOT NULL DEFAULT 0,
    dead_at      REAL
);
CREATE INDEX claimq_workers_last_seen ON claimq_workers (last_seen_at);

-- The W3C traceparent of the code that enqueued the job (OpenTelemetry; NULL without it).
ALTER TABLE claimq_jobs ADD COLUMN trace_context TEXT;

-- Dead letters by reason, per queue and task: an index-only count.
CREATE INDEX claimq_dead_queue_reason ON claimq_dead (queue, task, reason);
