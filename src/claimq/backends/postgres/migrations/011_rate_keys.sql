-- Per-key rate limits (README "Flow control"): a queue's key_rate_* limit holds for each value
-- of its jobs' rate_key apart (10/s per customer), a GCRA bucket per key in rate_keys; a
-- handler's Throttled pauses its job's rate key only (rate_keys.throttled_until). A queue given
-- a job with a rate key is `keyed` (claim_flow.sql). A row whose bucket is full and whose
-- throttle has passed says no more than no row.
ALTER TABLE {schema}.jobs ADD COLUMN rate_key text;
ALTER TABLE {schema}.queues
    ADD COLUMN key_rate_count integer CHECK (key_rate_count IS NULL OR key_rate_count > 0),
    ADD COLUMN key_rate_period double precision
        CHECK (key_rate_period IS NULL OR key_rate_period > 0),
    ADD COLUMN key_rate_burst integer CHECK (key_rate_burst IS NULL OR key_rate_burst > 0);
CREATE TABLE {schema}.rate_keys (
    queue           text NOT NULL,
    key             text NOT NULL,
    tat             timestamptz,  -- GCRA: the key's theoretical arrival time
    throttled_until timestamptz,
    PRIMARY KEY (queue, key)
);
-- The claim reads only the keys whose bucket is not full or that are throttled.
CREATE INDEX rate_keys_tat ON {schema}.rate_keys (queue, tat);
CREATE INDEX rate_keys_throttled ON {schema}.rate_keys (queue, throttled_until)
    WHERE throttled_until IS NOT NULL;
