-- Awaitable results: a waiter (one per App, identified by a uuid) registers the jobs it waits
-- for here; the archive and dead-letter inserts notify `{schema}_finished` with the ids that
-- somebody waits for, and only then (no waiter, no NOTIFY: the settle path's commits never
-- queue on the notification lock for results nobody asked for).
CREATE TABLE {schema}.result_waiters (
    job_id     bigint NOT NULL,
    waiter     uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, waiter)
);

-- One call per statement (a batch of completions is one statement); the transition table is
-- read only while some waiter is registered. Payloads stay under NOTIFY's 8,000 bytes: at most
-- 300 ids (of up to 20 characters and a comma) per notification.
CREATE FUNCTION {schema}.notify_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM {schema}.result_waiters) THEN
        PERFORM pg_notify('{schema}_finished', string_agg(w.id::text, ','))
        FROM (SELECT DISTINCT f.id, (dense_rank() OVER (ORDER BY f.id)) / 300 AS part
              FROM finished f JOIN {schema}.result_waiters r ON r.job_id = f.id) w
        GROUP BY w.part;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER archive_notify_finished AFTER INSERT ON {schema}.archive
    REFERENCING NEW TABLE AS finished
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.notify_finished();
CREATE TRIGGER dead_notify_finished AFTER INSERT ON {schema}.dead
    REFERENCING NEW TABLE AS finished
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.notify_finished();

-- Periodic schedules. `next_run_at` is the first tick not enqueued yet; a scheduler locks the
-- due rows (SKIP LOCKED), enqueues their ticks and moves next_run_at on in one transaction, so
-- each tick becomes exactly one job whichever worker gets there first.
CREATE TABLE {schema}.schedules (
    name            text PRIMARY KEY,
    task            text NOT NULL,
    payload         jsonb NOT NULL DEFAULT '{}',
    queue           text NOT NULL,
    priority        integer NOT NULL DEFAULT 0,
    max_attempts    integer NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    timeout_seconds double precision CHECK (timeout_seconds IS NULL OR timeout_seconds > 0),
    cron            text,
    every_seconds   double precision CHECK (every_seconds IS NULL OR every_seconds > 0),
    tz              text NOT NULL DEFAULT 'UTC',
    missed          text NOT NULL DEFAULT 'latest' CHECK (missed IN ('latest', 'all', 'skip')),
    paused          boolean NOT NULL DEFAULT false,
    next_run_at     timestamptz NOT NULL,
    last_run_at     timestamptz,
    last_job_id     bigint,
    declared        text,  -- the definition code declared (NULL: added at runtime)
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((cron IS NULL) <> (every_seconds IS NULL))
);
CREATE INDEX schedules_due ON {schema}.schedules (next_run_at) WHERE NOT paused;

-- Retention per queue ('*': every queue without a row of its own). NULL: no limit of that kind.
CREATE TABLE {schema}.retention (
    queue        text PRIMARY KEY,
    archive_age  double precision CHECK (archive_age IS NULL OR archive_age >= 0),
    archive_rows bigint CHECK (archive_rows IS NULL OR archive_rows >= 0),
    dead_age     double precision CHECK (dead_age IS NULL OR dead_age >= 0),
    dead_rows    bigint CHECK (dead_rows IS NULL OR dead_rows >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Named leases: work that one process at a time does across all workers (the pruner).
CREATE TABLE {schema}.leases (
    name   text PRIMARY KEY,
    holder text NOT NULL,
    until  timestamptz NOT NULL
);
