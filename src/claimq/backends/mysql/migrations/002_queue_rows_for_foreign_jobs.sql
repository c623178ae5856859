-- A job that another program inserts with plain SQL, into a queue that has no claimq_queues
-- row, must be claimed like any other (the claim reads claimq_queues for paused, active and
-- max_workers). INSERT IGNORE: an existing queue row keeps its settings.
CREATE TRIGGER claimq_jobs_queue_row AFTER INSERT ON claimq_jobs FOR EACH ROW
    INSERT IGNORE INTO claimq_queues (name, created_at, updated_at)
    VALUES (NEW.queue, NEW.created_at, NEW.created_at);

-- Jobs inserted that way before this migration.
INSERT IGNORE INTO claimq_queues (name, created_at, updated_at)
SELECT queue, min(created_at), min(created_at) FROM claimq_jobs GROUP BY queue;
