-- Circuit breakers (README "Flow control"), one per queue and task: `failure_limit` failures
-- within `window_seconds` open it; while open, no claim takes the task's jobs from the queue;
-- `cooldown_seconds` after opening, one claim takes one job (the probe, probe_id) and the
-- breaker is half_open; the probe's success closes it, its failure opens it again. fail.sql
-- counts the failures; claim_flow.sql gates the claims and moves the state on.
CREATE TABLE {schema}.breakers (
    queue            text NOT NULL,
    task             text NOT NULL,
    failure_limit    integer NOT NULL CHECK (failure_limit > 0),
    window_seconds   double precision NOT NULL CHECK (window_seconds > 0),
    cooldown_seconds double precision NOT NULL CHECK (cooldown_seconds > 0),
    state            text NOT NULL DEFAULT 'closed'
                     CHECK (state IN ('closed', 'open', 'half_open')),
    failures         integer NOT NULL DEFAULT 0,
    window_until     timestamptz,  -- the failures counted are those before this
    opened_at        timestamptz,
    open_until       timestamptz,
    probe_id         bigint,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (queue, task)
);

-- A queue with a breaker is flow-controlled (claim_flow.sql).
ALTER TABLE {schema}.queues
    ADD COLUMN breakers boolean NOT NULL DEFAULT false,
    DROP COLUMN flow;
ALTER TABLE {schema}.queues
    ADD COLUMN flow boolean GENERATED ALWAYS AS (
        keyed OR rate_count IS NOT NULL OR aging_step IS NOT NULL
        OR throttled_until IS NOT NULL OR breakers) STORED;
