-- Circuit breakers (README "Flow control"), one per queue and task: `failure_limit` failures
-- within `window_seconds` open it; while open, no claim takes the task's jobs from the queue;
-- `cooldown_seconds` after opening, one claim takes one job (the probe, probe_id) and the
-- breaker is half_open; the probe's success closes it, its failure opens it again.
CREATE TABLE claimq_breakers (
    queue            TEXT NOT NULL,
    task             TEXT NOT NULL,
    failure_limit    INTEGER NOT NULL CHECK (failure_limit > 0),
    window_seconds   REAL NOT NULL CHECK (window_seconds > 0),
    cooldown_seconds REAL NOT NULL CHECK (cooldown_seconds > 0),
    state            TEXT NOT NULL DEFAULT 'closed'
                     CHECK (state IN ('closed', 'open', 'half_open')),
    failures         INTEGER NOT NULL DEFAULT 0,
    window_until     REAL,
    opened_at        REAL,
    open_until       REAL,
    probe_id         INTEGER,
    updated_at       REAL NOT NULL,
    PRIMARY KEY (queue, task)
);
-- A queue with a breaker is flow-controlled.
ALTER TABLE claimq_queues ADD COLUMN breakers INTEGER NOT NULL DEFAULT 0;
