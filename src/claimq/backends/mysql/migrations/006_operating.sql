-- Operating claimq (issue 14): the worker registry, the enqueuer's trace context, and the
-- index the stats read.

-- One row per running worker process: written at its start, refreshed with its heartbeat,
-- deleted at a clean stop. A row silent for too long is marked dead (dead_at), later pruned.
CREATE TABLE claimq_workers (
    id           VARCHAR(255) NOT NULL PRIMARY KEY,
    host         VARCHAR(255) NOT NULL,
    pid          INT NOT NULL,
    queues       LONGTEXT NULL,  -- a JSON array; NULL: every queue
    concurrency  INT NOT NULL,
    version      VARCHAR(64) NOT NULL,
    started_at   DATETIME(6) NOT NULL,
    last_seen_at DATETIME(6) NOT NULL,
    in_flight    INT NOT NULL DEFAULT 0,
    dead_at      DATETIME(6) NULL,
    KEY claimq_workers_last_seen (last_seen_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- The W3C traceparent of the code that enqueued the job (OpenTelemetry; NULL without it).
ALTER TABLE claimq_jobs ADD COLUMN trace_context VARCHAR(512) NULL;

-- Dead letters by reason, per queue and task: an index-only count.
CREATE INDEX claimq_dead_queue_reason ON claimq_dead (queue, task, reason);
