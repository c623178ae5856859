-- Flow control (README "Flow control"): a queue's rate limit and its GCRA state (the theoretical
-- arrival time), priority aging, a handler's Throttled, and whether jobs with a concurrency key
-- were ever queued on it. A queue with any of these is `flow`: its claimers lock its row
-- (lock_limited_queues.sql, as for max_workers) and take turns; every other queue claims as
-- before.
ALTER TABLE claimq_queues
    ADD COLUMN keyed BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN rate_count INT NULL CHECK (rate_count IS NULL OR rate_count > 0),
    ADD COLUMN rate_period DOUBLE NULL CHECK (rate_period IS NULL OR rate_period > 0),
    ADD COLUMN rate_burst INT NULL CHECK (rate_burst IS NULL OR rate_burst > 0),
    ADD COLUMN rate_tat DATETIME(6) NULL,
    ADD COLUMN aging_step DOUBLE NULL CHECK (aging_step IS NULL OR aging_step > 0),
    ADD COLUMN aging_cap INT NULL CHECK (aging_cap IS NULL OR aging_cap > 0),
    ADD COLUMN throttled_until DATETIME(6) NULL,
    ADD COLUMN flow BOOLEAN AS (keyed OR rate_count IS NOT NULL OR aging_step IS NOT NULL
                                OR throttled_until IS NOT NULL) PERSISTENT;

-- At most concurrency_limit fetched or processing jobs per (queue, concurrency_key).
ALTER TABLE claimq_jobs
    ADD COLUMN concurrency_key VARCHAR(255) NULL,
    ADD COLUMN concurrency_limit INT NULL CHECK (concurrency_limit IS NULL OR concurrency_limit > 0);

-- A flow claim counts each key's in-flight jobs.
CREATE INDEX claimq_jobs_keyed ON claimq_jobs (queue, concurrency_key, status);
