-- Ordered sequences (README "Flow control"): jobs of a queue with the same sequence_key run one
-- at a time in id order. sequence_wait: a failed job waiting for its retry holds the jobs after
-- it (true), or lets the next start (false). A queue given such a job is `keyed` (claim_flow.sql).
ALTER TABLE {schema}.jobs
    ADD COLUMN sequence_key text,
    ADD COLUMN sequence_wait boolean;

-- A sequence's live jobs in order: its head, and whether one of it runs.
CREATE INDEX jobs_sequence ON {schema}.jobs (queue, sequence_key, id)
    WHERE sequence_key IS NOT NULL;
