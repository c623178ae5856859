-- Flow control flat under a backlog (issue 27): a flow claim whose first rows in claim order
-- are held back (a concurrency key at its limit, sequence jobs) reads on one concurrency key at
-- a time, and the jobs without one apart, each in claim order from this index (one probe per
-- key, never a row-by-row read of the backlog). It still serves the count of each key's jobs
-- in flight (its first three columns, as before), and replaces the index that did.
ALTER TABLE claimq_jobs
    DROP INDEX claimq_jobs_keyed,
    ADD INDEX claimq_jobs_keyed (queue, concurrency_key, status, sequence_key, priority DESC,
                                 run_at, id);
