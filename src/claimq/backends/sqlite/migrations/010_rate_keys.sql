-- Per-key rate limits (README "Flow control"): a queue's key_rate_* limit holds for each value
-- of its jobs' rate_key apart, a GCRA bucket per key in claimq_rate_keys; a handler's
-- Throttled pauses its job's rate key only. A queue given a job with a rate key is `keyed`.
ALTER TABLE claimq_jobs ADD COLUMN rate_key TEXT;
ALTER TABLE claimq_queues ADD COLUMN key_rate_count INTEGER CHECK (key_rate_count IS NULL OR key_rate_count > 0);
ALTER TABLE claimq_queues ADD COLUMN key_rate_period REAL CHECK (key_rate_period IS NULL OR key_rate_period > 0);
ALTER TABLE claimq_queues ADD COLUMN key_rate_burst INTEGER CHECK (key_rate_burst IS NULL OR key_rate_burst > 0);
CREATE TABLE claimq_rate_keys (
    queue           TEXT NOT NULL,
    key             TEXT NOT NULL,
    tat             REAL,
    throttled_until REAL,
    PRIMARY KEY (queue, key)
);
