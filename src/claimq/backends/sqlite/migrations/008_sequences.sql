-- Ordered sequences (README "Flow control"): jobs of a queue with the same sequence_key run one
-- at a time in id order. sequence_wait: a failed job waiting for its retry holds the jobs after
-- it (1), or lets the next start (0). A queue given such a job is `keyed`.
ALTER TABLE claimq_jobs ADD COLUMN sequence_key TEXT;
ALTER TABLE claimq_jobs ADD COLUMN sequence_wait INTEGER;
CREATE INDEX claimq_jobs_sequence ON claimq_jobs (queue, sequence_key, id)
    WHERE sequence_key IS NOT NULL;
