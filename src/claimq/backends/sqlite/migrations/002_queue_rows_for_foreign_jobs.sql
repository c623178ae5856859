-- A job that another program inserts with plain SQL, into a queue that has no claimq_queues
-- row, must be claimed like any other (the claim reads claimq_queues for paused, active and
-- max_workers). The WHEN test (one primary-key probe) keeps the trigger's insert free of
-- conflicts, so an outer INSERT OR REPLACE/ABORT, whose conflict policy SQLite applies to the
-- trigger's statements too, can neither replace a queue's settings nor fail the job's insert.
CREATE TRIGGER claimq_jobs_queue_row AFTER INSERT ON claimq_jobs
WHEN NOT EXISTS (SELECT 1 FROM claimq_queues WHERE name = NEW.queue)
BEGIN
    INSERT INTO claimq_queues (name, created_at, updated_at)
    VALUES (NEW.queue, NEW.created_at, NEW.created_at);
END;

-- Jobs inserted that way before this migration.
INSERT INTO claimq_queues (name, created_at, updated_at)
SELECT queue, min(created_at), min(created_at) FROM claimq_jobs
WHERE queue NOT IN (SELECT name FROM claimq_queues)
GROUP BY queue;
