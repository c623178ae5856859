-- Operating claimq (issue 14): the worker registry, the enqueuer's trace context, and the
-- indexes the stats read.

-- One row per running worker process: written at its start, refreshed with its heartbeat,
-- deleted at a clean stop. A row silent for too long is marked dead (dead_at), later pruned.
CREATE TABLE {schema}.workers (
    id           text PRIMARY KEY,
    host         text NOT NULL,
    pid          integer NOT NULL,
    queues       text[],  -- NULL: every queue
    concurrency  integer NOT NULL,
    version      text NOT NULL,
    started_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    in_flight    integer NOT NULL DEFAULT 0,
    dead_at      timestamptz
);
CREATE INDEX workers_last_seen ON {schema}.workers (last_seen_at);

-- The W3C traceparent of the code that enqueued the job (OpenTelemetry; NULL without it).
ALTER TABLE {schema}.jobs ADD COLUMN trace_context text;

-- Dead letters by reason, per queue and task: an index-only count.
CREATE INDEX dead_queue_reason ON {schema}.dead (queue, task, reason);
