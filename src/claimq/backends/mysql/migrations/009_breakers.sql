-- Circuit breakers (README "Flow control"), one per queue and task: `failure_limit` failures
-- within `window_seconds` open it; while open, no claim takes the task's jobs from the queue;
-- `cooldown_seconds` after opening, one claim takes one job (the probe, probe_id) and the
-- breaker is half_open; the probe's success closes it, its failure opens it again.
CREATE TABLE claimq_breakers (
    queue            VARCHAR(128) NOT NULL,
    task             VARCHAR(256) NOT NULL,
    failure_limit    INT NOT NULL CHECK (failure_limit > 0),
    window_seconds   DOUBLE NOT NULL CHECK (window_seconds > 0),
    cooldown_seconds DOUBLE NOT NULL CHECK (cooldown_seconds > 0),
    state            VARCHAR(16) NOT NULL DEFAULT 'closed'
                     CHECK (state IN ('closed', 'open', 'half_open')),
    failures         INT NOT NULL DEFAULT 0,
    window_until     DATETIME(6) NULL,
    opened_at        DATETIME(6) NULL,
    open_until       DATETIME(6) NULL,
    probe_id         BIGINT NULL,
    updated_at       DATETIME(6) NOT NULL,
    PRIMARY KEY (queue, task)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- A queue with a breaker is flow-controlled: its claims gate the breakers' tasks.
ALTER TABLE claimq_queues
    ADD COLUMN breakers BOOLEAN NOT NULL DEFAULT FALSE,
    MODIFY COLUMN flow BOOLEAN AS (keyed OR rate_count IS NOT NULL OR aging_step IS NOT NULL
                                   OR throttled_until IS NOT NULL OR breakers) PERSISTENT;
