-- Ordered sequences (README "Flow control"): jobs of a queue with the same sequence_key run one
-- at a time in id order. sequence_wait: a failed job waiting for its retry holds the jobs after
-- it (TRUE), or lets the next start (FALSE). A queue given such a job is `keyed` (flow): its
-- claims find each sequence's head under the queue's row lock (claim_sequence_heads.sql).
ALTER TABLE claimq_jobs
    ADD COLUMN sequence_key VARCHAR(255) NULL,
    ADD COLUMN sequence_wait BOOLEAN NULL;

CREATE INDEX claimq_jobs_sequence ON claimq_jobs (queue, sequence_key, id);
