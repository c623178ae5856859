-- One sequence gives every job its id for life: a job keeps it as it moves between tables.
CREATE SEQUENCE {schema}.job_ids AS bigint;

CREATE TABLE {schema}.queues (
    name            text PRIMARY KEY,
    paused          boolean NOT NULL DEFAULT false,
    active          boolean NOT NULL DEFAULT true,
    max_workers     integer CHECK (max_workers IS NULL OR max_workers > 0),
    lease_seconds   double precision NOT NULL DEFAULT 30 CHECK (lease_seconds > 0),
    timeout_seconds double precision CHECK (timeout_seconds IS NULL OR timeout_seconds > 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE {schema}.jobs (
    id               bigint PRIMARY KEY DEFAULT nextval('{schema}.job_ids'),
    queue            text NOT NULL,
    task             text NOT NULL,
    payload          jsonb NOT NULL,
    tags             text[] NOT NULL DEFAULT '{}',
    idempotency_key  text,
    priority         integer NOT NULL DEFAULT 0,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'fetched', 'processing')),
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    worker_id        text,
    claim_token      uuid,
    lease_until      timestamptz,
    heartbeat_at     timestamptz,
    run_at           timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    errors           jsonb NOT NULL DEFAULT '[]',
    cancel_requested boolean NOT NULL DEFAULT false,
    timeout_seconds  double precision,
    retry            jsonb
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_insert_scale_factor = 0.01);
ALTER SEQUENCE {schema}.job_ids OWNED BY {schema}.jobs.id;

-- The claim reads only this index: it holds pending rows alone, so it stays small.
CREATE INDEX jobs_claimable ON {schema}.jobs (queue, priority DESC, run_at, id)
    WHERE status = 'pending';
-- Bulkhead counts and the reaper read in-flight rows only.
CREATE INDEX jobs_inflight ON {schema}.jobs (queue)
    WHERE status IN ('fetched', 'processing');
CREATE INDEX jobs_lease ON {schema}.jobs (lease_until)
    WHERE status IN ('fetched', 'processing');

CREATE TABLE {schema}.archive (
    id               bigint PRIMARY KEY,
    queue            text NOT NULL,
    task             text NOT NULL,
    payload          jsonb NOT NULL,
    tags             text[] NOT NULL,
    idempotency_key  text,
    priority         integer NOT NULL,
    attempts         integer NOT NULL,
    max_attempts     integer NOT NULL,
    worker_id        text,
    run_at           timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz NOT NULL,
    duration         double precision,
    result           jsonb,
    errors           jsonb NOT NULL,
    timeout_seconds  double precision,
    retry            jsonb
);
CREATE INDEX archive_finished ON {schema}.archive (finished_at);

CREATE TABLE {schema}.dead (
    id               bigint PRIMARY KEY,
    queue            text NOT NULL,
    task             text NOT NULL,
    payload          jsonb NOT NULL,
    tags             text[] NOT NULL,
    idempotency_key  text,
    priority         integer NOT NULL,
    attempts         integer NOT NULL,
    max_attempts     integer NOT NULL,
    worker_id        text,
    run_at           timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz NOT NULL,
    reason           text NOT NULL,
    errors           jsonb NOT NULL,
    timeout_seconds  double precision,
    retry            jsonb
);
CREATE INDEX dead_finished ON {schema}.dead (finished_at);

-- Key -> the job that holds it, for as long as that job is live and a retention window after.
CREATE TABLE {schema}.idempotency_keys (
    key        text PRIMARY KEY,
    job_id     bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
