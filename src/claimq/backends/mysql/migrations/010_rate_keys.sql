-- Per-key rate limits (README "Flow control"): a queue's key_rate_* limit holds for each value
-- of its jobs' rate_key apart, a GCRA bucket per key in claimq_rate_keys; a handler's
-- Throttled pauses its job's rate key only. A queue given a job with a rate key is `keyed`.
ALTER TABLE claimq_jobs ADD COLUMN rate_key VARCHAR(255) NULL;

ALTER TABLE claimq_queues
    ADD COLUMN key_rate_count INT NULL CHECK (key_rate_count IS NULL OR key_rate_count > 0),
    ADD COLUMN key_rate_period DOUBLE NULL CHECK (key_rate_period IS NULL OR key_rate_period > 0),
    ADD COLUMN key_rate_burst INT NULL CHECK (key_rate_burst IS NULL OR key_rate_burst > 0);

CREATE TABLE claimq_rate_keys (
    queue           VARCHAR(128) NOT NULL,
    rate_key        VARCHAR(255) NOT NULL,
    tat             DATETIME(6) NULL,
    throttled_until DATETIME(6) NULL,
    PRIMARY KEY (queue, rate_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
