-- Flow control (README "Flow control"): a queue's rate limit and its GCRA state (the
-- theoretical arrival time), and whether jobs with a concurrency key were ever queued on it
-- (only then, or with a rate limit, does its claim count running jobs per key).
ALTER TABLE claimq_queues ADD COLUMN keyed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE claimq_queues ADD COLUMN rate_count INTEGER CHECK (rate_count IS NULL OR rate_count > 0);
ALTER TABLE claimq_queues ADD COLUMN rate_period REAL CHECK (rate_period IS NULL OR rate_period > 0);
ALTER TABLE claimq_queues ADD COLUMN rate_burst INTEGER CHECK (rate_burst IS NULL OR rate_burst > 0);
ALTER TABLE claimq_queues ADD COLUMN rate_tat REAL;
-- Priority aging: +1 for every aging_step seconds a job has been due, at most aging_cap more.
ALTER TABLE claimq_queues ADD COLUMN aging_step REAL CHECK (aging_step IS NULL OR aging_step > 0);
ALTER TABLE claimq_queues ADD COLUMN aging_cap INTEGER CHECK (aging_cap IS NULL OR aging_cap > 0);
-- Throttled (a handler raised it): no claims from the queue until then.
ALTER TABLE claimq_queues ADD COLUMN throttled_until REAL;
-- At most concurrency_limit fetched or processing jobs per (queue, concurrency_key).
ALTER TABLE claimq_jobs ADD COLUMN concurrency_key TEXT;
ALTER TABLE claimq_jobs ADD COLUMN concurrency_limit INTEGER CHECK (concurrency_limit IS NULL OR concurrency_limit > 0);
