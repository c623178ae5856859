-- Flow control (README "Flow control"). A queue is `flow` when it has a rate limit or priority
-- aging, is throttled (a handler raised Throttled), or has been given jobs with a concurrency
-- key: only such queues' claims take claim_flow.sql (under their
-- queue row's lock); settle.sql leaves them alone, and every other queue claims as before.
ALTER TABLE {schema}.queues
    ADD COLUMN keyed boolean NOT NULL DEFAULT false,
    ADD COLUMN rate_count integer CHECK (rate_count IS NULL OR rate_count > 0),
    ADD COLUMN rate_period double precision CHECK (rate_period IS NULL OR rate_period > 0),
    ADD COLUMN rate_burst integer CHECK (rate_burst IS NULL OR rate_burst > 0),
    -- GCRA: the theoretical arrival time; the bucket is full once it lies in the past
    ADD COLUMN rate_tat timestamptz,
    -- priority aging: +1 for every aging_step seconds a job has been due, at most aging_cap
    ADD COLUMN aging_step double precision CHECK (aging_step IS NULL OR aging_step > 0),
    ADD COLUMN aging_cap integer CHECK (aging_cap IS NULL OR aging_cap > 0),
    -- Throttled: no claims until then (the claim clears it once past)
    ADD COLUMN throttled_until timestamptz,
    ADD COLUMN flow boolean GENERATED ALWAYS AS (
        keyed OR rate_count IS NOT NULL OR aging_step IS NOT NULL
        OR throttled_until IS NOT NULL) STORED;

-- At most concurrency_limit fetched or processing jobs per (queue, concurrency_key).
ALTER TABLE {schema}.jobs
    ADD COLUMN concurrency_key text,
    ADD COLUMN concurrency_limit integer CHECK (concurrency_limit IS NULL OR concurrency_limit > 0);
